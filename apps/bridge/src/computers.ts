/**
 * Ownership and authorization, nothing else (issue 19): the bridge turns a scope into the API's
 * computer key and screen, mints a per-computer capability when a caller creates or adopts a
 * computer, keeps only its SHA-256 in memory, and serializes calls on one computer. Naming a
 * computer without its capability fails exactly like naming a missing one. Nothing is written
 * to disk: after a restart callers adopt again and get new capabilities.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type ExternalClient, RakazoApiError } from "@rakazo/client";
import { BridgeError } from "./errors.ts";
import { identityOf, type Scope } from "./scope.ts";

interface Grant {
  readonly computerId: string;
  readonly screen: string;
  readonly hash: Buffer;
}

const hashOf = (capability: string): Buffer => createHash("sha256").update(capability).digest();

export interface Held {
  readonly computerId: string;
  readonly capability: string;
}

export class Computers {
  readonly #api: ExternalClient;
  /** Capability hashes by hex digest (the lookup key is itself a hash, never the secret). */
  readonly #grants = new Map<string, Grant>();
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(api: ExternalClient) {
    this.#api = api;
  }

  /** Create-or-adopt the scope's computer; the capability is returned here and never again. */
  async create(scope: Scope) {
    const { key, screen } = identityOf(scope);
    const made = await this.#call(() => this.#api.call("external/computer/create", { key, screen }));
    const capability = `rcap_${randomBytes(32).toString("base64url")}`;
    const hash = hashOf(capability);
    this.#grants.set(hash.toString("hex"), { computerId: made.computer.computerId, screen, hash });
    return {
      computerId: made.computer.computerId,
      capability,
      key,
      screen,
      created: made.created,
      state: made.computer.state,
    };
  }

  /** The scope's computers as the API knows them (no capabilities: adopt to get one). */
  async list(scope: Scope) {
    const { key } = identityOf(scope);
    const all = await this.#call(() => this.#api.call("external/computer/list", {}));
    return all.filter((computer) => computer.key === key);
  }

  /**
   * Runs `work` on the computer `held` names, one call per computer at a time. A missing, wrong
   * or revoked capability is NOT_FOUND, like an unknown computer (no existence oracle).
   */
  use<T>(held: Held, work: (target: { computerId: string; screen: string }) => Promise<T>): Promise<T> {
    const grant = this.#grantFor(held);
    const previous = this.#queues.get(grant.computerId) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(() => {
        // Checked again in the queue: a destroy queued before this call revoked it.
        const current = this.#grantFor(held);
        return this.#call(() => work({ computerId: current.computerId, screen: current.screen }));
      });
    this.#queues.set(grant.computerId, run);
    void run
      .finally(() => {
        if (this.#queues.get(grant.computerId) === run) this.#queues.delete(grant.computerId);
      })
      .catch(() => undefined);
    return run;
  }

  /**
   * Runs `work` on the computer `held` names without joining its queue: a background command's
   * long poll would otherwise hold every other call on that computer for up to its wait.
   */
  alongside<T>(held: Held, work: (target: { computerId: string; screen: string }) => Promise<T>): Promise<T> {
    const grant = this.#grantFor(held);
    return this.#call(() => work({ computerId: grant.computerId, screen: grant.screen }));
  }

  /** Destroys the computer and revokes every capability for it. */
  async destroy(held: Held) {
    return this.use(held, async ({ computerId }) => {
      const result = await this.#api.call("external/computer/destroy", { computerId });
      this.#revokeAll(computerId);
      return result;
    });
  }

  /** Ends a caller's hold: `keep` leaves the computer for re-adoption, otherwise it is destroyed. */
  async release(held: Held, keep: boolean) {
    if (!keep) return { kept: false, ...(await this.destroy(held)) };
    const grant = this.#grantFor(held);
    this.#grants.delete(grant.hash.toString("hex"));
    return { kept: true, computerId: grant.computerId };
  }

  get api(): ExternalClient {
    return this.#api;
  }

  #grantFor(held: Held): Grant {
    const hash = hashOf(typeof held.capability === "string" ? held.capability : "");
    const grant = this.#grants.get(hash.toString("hex"));
    // The map lookup is by hash; the constant-time comparison guards the final equality.
    if (!grant || !timingSafeEqual(grant.hash, hash) || grant.computerId !== held.computerId) {
      throw new BridgeError("NOT_FOUND", "computer not found");
    }
    return grant;
  }

  #revokeAll(computerId: string): void {
    for (const [id, grant] of this.#grants) if (grant.computerId === computerId) this.#grants.delete(id);
  }

  /** API refusals keep their code and status; anything else is a gateway failure. */
  async #call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof BridgeError) throw error;
      if (error instanceof RakazoApiError) {
        // The bridge's own credential being refused is the operator's problem, not the caller's.
        if (error.code === "UNAUTHENTICATED" || error.code === "UNKNOWN_RPC") {
          throw new BridgeError("BAD_GATEWAY", "the API refused the bridge's external token", 502);
        }
        throw new BridgeError(error.code, error.message, error.status);
      }
      throw new BridgeError("BAD_GATEWAY", `the API could not be reached: ${(error as Error).message}`, 502);
    }
  }
}
