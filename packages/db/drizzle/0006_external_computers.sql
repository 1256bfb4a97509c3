CREATE TABLE "external_computers" (
	"key" text PRIMARY KEY NOT NULL,
	"computer_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "external_computers" ADD CONSTRAINT "external_computers_computer_id_computers_id_fk" FOREIGN KEY ("computer_id") REFERENCES "public"."computers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "external_computers_computer_uq" ON "external_computers" USING btree ("computer_id");