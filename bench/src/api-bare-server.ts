/**
 * The baseline of the API bench: a bare Hono app on @hono/node-server doing what `computer/get`
 * must do at the least — look the bearer token's hash up and SELECT the caller's computer — with
 * the same driver (postgres.js, same pool size) and nothing else: no logging, no validation, no
 * request ids. Run by api.ts as `node api-bare-server.ts <databaseUrl> <port>`.
 */
import { createHash } from "node:crypto";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import postgres from "postgres";

const [databaseUrl, port] = process.argv.slice(2);
const sql = postgres(databaseUrl as string, { max: 10, onnotice: () => {} });
const app = new Hono();

app.post("/rpc/computer/get", async (c) => {
  const secret = /^Bearer\s+(\S+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
  const hash = createHash("sha256").update(secret).digest("hex");
  const [token] = await sql`
    select id, user_id from api_tokens where secret_hash = ${hash} and revoked_at is null limit 1`;
  if (!token) return c.json({ error: { code: "UNAUTHENTICATED" } }, 401);
  const { computerId } = (await c.req.json()) as { computerId: string };
  const [computer] = await sql`
    select c.* from computers c
    join space_members m on m.space_id = c.space_id and m.user_id = ${token.user_id}
    where c.id = ${computerId} limit 1`;
  if (!computer) return c.json({ error: { code: "NOT_FOUND" } }, 404);
  return c.json({ result: computer });
});

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(port) }, () => {
  process.stdout.write("listening\n");
});
