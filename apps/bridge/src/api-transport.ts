/**
 * How the bridge reaches the API: `node:http` over connections kept alive between calls, in
 * place of the global `fetch`. Every tool call is one small JSON POST and its answer; undici's
 * fetch spends more of the bridge's CPU on each (WHATWG streams, its WebAssembly parser) than
 * the rest of the hop together, and on a busy machine the bridge's CPU is the hop's latency.
 * The answer is read whole (the API's answers are bounded by its contract) and handed back as
 * a `Response`, so the typed client (@rakazo/client) stays the one place that speaks the RPCs.
 */
import http from "node:http";
import https from "node:https";

/** Idle connections are closed after 4 s, before the API's own 5 s keep-alive timeout. */
const IDLE_MS = 4_000;

export function keptAliveFetch(
  options: { maxSockets?: number } = {},
): (request: Request) => Promise<Response> {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxFreeSockets: 16, timeout: IDLE_MS, ...options }),
    "https:": new https.Agent({ keepAlive: true, maxFreeSockets: 16, timeout: IDLE_MS, ...options }),
  };
  return async (request) => {
    const url = new URL(request.url);
    const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"];
    const body = Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    headers["content-length"] = String(body.byteLength);
    const send = url.protocol === "https:" ? https.request : http.request;
    return new Promise<Response>((resolve, reject) => {
      const outgoing = send(url, { method: request.method, headers, agent }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("error", reject);
        incoming.on("end", () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (typeof value === "string") answer.set(name, value);
          }
          const status = incoming.statusCode ?? 502;
          resolve(
            new Response(chunks.length > 0 ? Buffer.concat(chunks) : null, { status, headers: answer }),
          );
        });
      });
      request.signal?.addEventListener("abort", () => outgoing.destroy(new Error("aborted")), { once: true });
      outgoing.on("error", reject);
      outgoing.end(body);
    });
  };
}
