ALTER TABLE "computers" ADD COLUMN "last_activity_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "takeover_reason" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "waiting_since" timestamp with time zone;