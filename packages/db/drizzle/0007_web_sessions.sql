ALTER TABLE "api_tokens" ADD COLUMN "kind" text DEFAULT 'api' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
-- Sessions the web app minted before they were stored: nobody holds them once the web service
-- restarted, and they always ended 12 hours after sign-in.
UPDATE "api_tokens" SET "kind" = 'web_session', "expires_at" = "created_at" + interval '12 hours' WHERE "name" = 'web session';
