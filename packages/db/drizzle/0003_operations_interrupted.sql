CREATE TABLE "worker_heartbeats" (
	"id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "computer_operations" ADD COLUMN "worker_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "computer_operations_reservation_uq" ON "computer_operations" USING btree ("computer_id") WHERE "computer_operations"."kind" in ('update', 'recover') and "computer_operations"."status" in ('queued', 'running', 'interrupted');