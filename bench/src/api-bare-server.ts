/**
 * The baseline of the API bench: a bare Hono app on @hono/node-server doing what `computer/get`
 * must do at the least — look the bearer token's hash up and SELECT the caller's computer — with
 * the same driver (postgres.js, same pool size) and nothing else: no logging, no validation, no
 * request ids. Run by api.ts as `node api-bare-server.ts <databaseUrl> <port> [<supervisorSocket>]`:
 * with a socket, each answer also waits for one `health` call to that supervisor over a
 * kept-alive connection (what `computer/get` asks a running Docker computer).
 */
import { createHash } from "node:crypto";
import http from "node:http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import postgres from "postgres";

const [databaseUrl, port, supervisorSocket] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true });

function health(socketPath: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        socketPath,
        method: "POST",
        path: "/rpc/health",
        agent,
        headers: { "content-type": "application/json" },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end("{}");
  });
}
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
  if (supervisorSocket) return c.json({ result: { ...computer, desktops: await health(supervisorSocket) } });
  return c.json({ result: computer });
});

serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(port) }, () => {
  process.stdout.write("listening\n");
});
