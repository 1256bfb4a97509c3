/**
 * The supervisor's RPC on the gateway's TCP listener (CMP-8, remote computers): a host reaches
 * the daemon through the provider's port hosting over one kept-alive connection, instead of
 * starting a Node process in the machine for every call (the command path).
 *
 * The listener is reachable by whoever can reach the provider's port URL, so every request must
 * carry the daemon's RPC key (`x-rakazo-supervisor-key`). The key is 32 random bytes made when
 * the daemon starts, written to `<runDir>/rpc.key` (0600) for the host to read through the
 * provider's file API, and kept in memory only as its sha256, compared in constant time. Anyone
 * in the machine who can read the file can already run the supervisor's CLI as the same user,
 * so the key adds no power inside the machine; it keeps everyone outside out.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, constants, openSync, renameSync, rmSync, writeSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { SUPERVISOR_RPC_KEY_FILE, SUPERVISOR_RPC_KEY_HEADER, SUPERVISOR_RPC_PATH } from "@rakazo/protocol";
import type { Log } from "../log.ts";
import { headerValue } from "./vocabulary.ts";

/**
 * Serves one RPC request: `route` is `/rpc/<method>` or `/exec`. The daemon's Unix socket serves
 * both; this TCP route only `/rpc/<method>`, once it has checked the key.
 */
export type RpcHandler = (
  request: http.IncomingMessage,
  response: http.ServerResponse,
  route: string,
) => void;

export interface GatewayRpc {
  /** sha256 of the key; the key itself is not kept. */
  readonly keyHash: Buffer;
  readonly handle: RpcHandler;
}

function hashRpcKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

/**
 * Makes a fresh RPC key and writes it to `<runDir>/rpc.key`: through a new private file opened
 * with O_EXCL|O_NOFOLLOW and renamed into place, so a link planted at either name is replaced,
 * never written through. Returns the key's hash.
 */
export function issueRpcKey(runDir: string): Buffer {
  const key = randomBytes(32).toString("base64url");
  const file = path.join(runDir, SUPERVISOR_RPC_KEY_FILE);
  const staged = `${file}.${randomBytes(6).toString("hex")}`;
  const fd = openSync(
    staged,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, key);
  } finally {
    closeSync(fd);
  }
  renameSync(staged, file);
  return hashRpcKey(key);
}

export function removeRpcKey(runDir: string): void {
  rmSync(path.join(runDir, SUPERVISOR_RPC_KEY_FILE), { force: true });
}

/**
 * Answers a request under `/v1/rpc/` (returns true), or leaves it to the gateway (false). Without
 * `rpc` (the gateway is on a Unix socket, where the daemon's own socket serves RPC) nothing
 * under that path is served.
 */
export function serveGatewayRpc(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  rpc: GatewayRpc | undefined,
  log: Log,
): boolean {
  const url = request.url ?? "";
  if (!rpc || !url.startsWith(SUPERVISOR_RPC_PATH)) return false;
  const given = headerValue(request, SUPERVISOR_RPC_KEY_HEADER);
  if (given === undefined || !timingSafeEqual(hashRpcKey(given), rpc.keyHash)) {
    log({
      event: "gateway.rejected",
      reason: given === undefined ? "missing_key" : "bad_key",
      transport: "rpc",
    });
    const body = JSON.stringify({ ok: false, reason: "unauthorized" });
    response.writeHead(401, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    response.end(body);
    request.resume();
    return true;
  }
  // `/v1/rpc/<method>` → `/rpc/<method>`; `/exec` is not reachable from here.
  rpc.handle(request, response, `/rpc/${url.slice(SUPERVISOR_RPC_PATH.length)}`);
  return true;
}
