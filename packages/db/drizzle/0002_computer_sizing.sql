ALTER TABLE "computers" ADD COLUMN "memory_mib" integer;--> statement-breakpoint
ALTER TABLE "computers" ADD COLUMN "cpu_millis" integer;--> statement-breakpoint
ALTER TABLE "computers" ADD COLUMN "pids_limit" integer;