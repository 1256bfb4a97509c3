/**
 * Who is calling: each agent harness is a client with a bridge token of its own, configured as a
 * SHA-256 (BRIDGE_TOKENS, BRIDGE_TOKENS_FILE; BRIDGE_TOKEN is the client `default`). The client
 * name namespaces everything the caller reaches — computer keys (scope.ts), capabilities
 * (computers.ts) and MCP sessions (mcp-sessions.ts) — so one client never reaches another's.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { BridgeClient } from "@rakazo/config";

export class ClientTokens {
  /** By the token's SHA-256 in hex: the lookup key is itself a hash, never the secret. */
  readonly #byHash = new Map<string, { readonly name: string; readonly hash: Buffer }>();

  constructor(clients: readonly BridgeClient[]) {
    for (const client of clients) {
      this.#byHash.set(client.tokenSha256, {
        name: client.name,
        hash: Buffer.from(client.tokenSha256, "hex"),
      });
    }
  }

  /** The client an `Authorization: Bearer <token>` header names, or undefined. */
  identify(authorization: string | undefined): string | undefined {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
    if (token === undefined) return undefined;
    const hash = createHash("sha256").update(token).digest();
    const known = this.#byHash.get(hash.toString("hex"));
    // The map lookup is by hash; the constant-time comparison guards the final equality.
    return known && timingSafeEqual(known.hash, hash) ? known.name : undefined;
  }
}
