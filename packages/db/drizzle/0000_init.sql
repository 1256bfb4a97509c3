CREATE TABLE "activity_events" (
	"id" text PRIMARY KEY NOT NULL,
	"computer_id" text NOT NULL,
	"bot_id" text,
	"run_id" text,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"secret_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "bots" (
	"id" text PRIMARY KEY NOT NULL,
	"space_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "computer_operations" (
	"id" text PRIMARY KEY NOT NULL,
	"computer_id" text NOT NULL,
	"kind" text NOT NULL,
	"stage" text NOT NULL,
	"status" text NOT NULL,
	"job_id" text,
	"heartbeat_at" timestamp with time zone,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "computers" (
	"id" text PRIMARY KEY NOT NULL,
	"space_id" text NOT NULL,
	"name" text NOT NULL,
	"mode" text NOT NULL,
	"owner_bot_id" text,
	"provider_kind" text NOT NULL,
	"provider_ref" text,
	"state" text NOT NULL,
	"home_key" text NOT NULL,
	"home_revision" integer DEFAULT 0 NOT NULL,
	"data_key_wrapped" text,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "control_leases" (
	"computer_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"user_id" text,
	"fencing_token" bigint DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone,
	"acquired_at" timestamp with time zone,
	CONSTRAINT "control_leases_computer_id_bot_id_pk" PRIMARY KEY("computer_id","bot_id")
);
--> statement-breakpoint
CREATE TABLE "execution_leases" (
	"computer_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"holder_id" text,
	"fencing_token" bigint DEFAULT 0 NOT NULL,
	"expires_at" timestamp with time zone,
	"acquired_at" timestamp with time zone,
	CONSTRAINT "execution_leases_computer_id_bot_id_pk" PRIMARY KEY("computer_id","bot_id")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"computer_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"status" text NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "space_members" (
	"space_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "space_members_space_id_user_id_pk" PRIMARY KEY("space_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "spaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"content_key_wrapped" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "activity_events" ADD CONSTRAINT "activity_events_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bots" ADD CONSTRAINT "bots_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "computer_operations" ADD CONSTRAINT "computer_operations_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "computers" ADD CONSTRAINT "computers_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "computers" ADD CONSTRAINT "computers_owner_bot_id_bots_id_fk" FOREIGN KEY ("owner_bot_id") REFERENCES "public"."bots"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "control_leases" ADD CONSTRAINT "control_leases_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "control_leases" ADD CONSTRAINT "control_leases_bot_id_bots_id_fk" FOREIGN KEY ("bot_id") REFERENCES "public"."bots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "control_leases" ADD CONSTRAINT "control_leases_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "execution_leases" ADD CONSTRAINT "execution_leases_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "execution_leases" ADD CONSTRAINT "execution_leases_bot_id_bots_id_fk" FOREIGN KEY ("bot_id") REFERENCES "public"."bots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_bot_id_bots_id_fk" FOREIGN KEY ("bot_id") REFERENCES "public"."bots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "space_members" ADD CONSTRAINT "space_members_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "space_members" ADD CONSTRAINT "space_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "activity_events_computer_idx" ON "activity_events" USING btree ("computer_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_secret_hash_uq" ON "api_tokens" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "bots_space_idx" ON "bots" USING btree ("space_id");--> statement-breakpoint
CREATE INDEX "computer_operations_computer_idx" ON "computer_operations" USING btree ("computer_id","created_at");--> statement-breakpoint
CREATE INDEX "computer_operations_active_idx" ON "computer_operations" USING btree ("status") WHERE "computer_operations"."status" in ('queued', 'running', 'interrupted');--> statement-breakpoint
CREATE INDEX "computers_space_idx" ON "computers" USING btree ("space_id");--> statement-breakpoint
CREATE UNIQUE INDEX "computers_home_key_uq" ON "computers" USING btree ("home_key");--> statement-breakpoint
CREATE INDEX "runs_computer_bot_idx" ON "runs" USING btree ("computer_id","bot_id");--> statement-breakpoint
CREATE INDEX "runs_active_idx" ON "runs" USING btree ("computer_id","bot_id") WHERE "runs"."status" in ('queued', 'running', 'waiting_takeover');--> statement-breakpoint
CREATE INDEX "space_members_user_idx" ON "space_members" USING btree ("user_id");