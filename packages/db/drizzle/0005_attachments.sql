CREATE TABLE "attachments" (
	"id" text PRIMARY KEY NOT NULL,
	"computer_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"run_id" text,
	"path" text NOT NULL,
	"name" text NOT NULL,
	"size" integer NOT NULL,
	"note" text,
	"content" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "attachments_computer_idx" ON "attachments" USING btree ("computer_id","created_at");