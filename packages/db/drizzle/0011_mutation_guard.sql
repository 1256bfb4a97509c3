CREATE TABLE "bot_mutation_policies" (
	"bot_id" text PRIMARY KEY NOT NULL,
	"policy" jsonb NOT NULL,
	"updated_by" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mutation_approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"computer_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"tool" text NOT NULL,
	"description" text NOT NULL,
	"rule" text NOT NULL,
	"status" text NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "runs_active_idx";--> statement-breakpoint
ALTER TABLE "bot_mutation_policies" ADD CONSTRAINT "bot_mutation_policies_bot_id_bots_id_fk" FOREIGN KEY ("bot_id") REFERENCES "public"."bots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mutation_approvals" ADD CONSTRAINT "mutation_approvals_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mutation_approvals" ADD CONSTRAINT "mutation_approvals_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mutation_approvals_computer_idx" ON "mutation_approvals" USING btree ("computer_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "mutation_approvals_pending_uq" ON "mutation_approvals" USING btree ("run_id") WHERE "mutation_approvals"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "runs_active_idx" ON "runs" USING btree ("computer_id","bot_id") WHERE "runs"."status" in ('queued', 'running', 'waiting_takeover', 'waiting_approval');