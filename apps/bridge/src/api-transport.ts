/**
 * How the bridge reaches the API: each RPC one `node:http` POST over connections kept alive
 * between calls, handed to the typed client (@rakazo/client) as its `post`, so the client stays
 * the one place that speaks the RPCs (paths, headers, answers and their errors). Every tool call
 * is one small JSON POST and its answer; undici's fetch spends more of the bridge's CPU on each
 * (WHATWG streams, its WebAssembly parser) than the rest of the hop together, and the Request
 * and Response objects around a call cost as much again: on a busy machine the bridge's CPU is
 * the hop's latency. The answer is read whole (the API's answers are bounded by its contract).
 */
import http from "node:http";
import https from "node:https";
import type { RpcPost } from "@rakazo/client";

/** Idle connections are closed after 4 s, before the API's own 5 s keep-alive timeout. */
const IDLE_MS = 4_000;
/** More than every external RPC's URL. */
const MAX_TARGETS = 64;

export function keptAlivePost(options: { maxSockets?: number } = {}): RpcPost {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxFreeSockets: 16, timeout: IDLE_MS, ...options }),
    "https:": new https.Agent({ keepAlive: true, maxFreeSockets: 16, timeout: IDLE_MS, ...options }),
  };
  /** Parsed once per RPC: the bridge calls a handful of URLs over and over (the cap bounds it). */
  const targets = new Map<string, URL>();
  return (url, headers, body) => {
    let target = targets.get(url);
    if (target === undefined) {
      target = new URL(url);
      if (targets.size < MAX_TARGETS) targets.set(url, target);
    }
    const secure = target.protocol === "https:";
    const payload = Buffer.from(body);
    const send = secure ? https.request : http.request;
    const agent = secure ? agents["https:"] : agents["http:"];
    return new Promise((resolve, reject) => {
      const outgoing = send(
        target,
        { method: "POST", headers: { ...headers, "content-length": payload.byteLength }, agent },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
          incoming.on("error", reject);
          incoming.on("end", () => {
            resolve({ status: incoming.statusCode ?? 502, body: Buffer.concat(chunks).toString("utf8") });
          });
        },
      );
      // A POST on a kept-alive connection the API closed is not sent again: exec is not idempotent.
      outgoing.on("error", reject);
      outgoing.end(payload);
    });
  };
}
