ALTER TABLE "runs" ADD COLUMN "task" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "started_by" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "hosted_at" timestamp with time zone;