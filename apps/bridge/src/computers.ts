/**
 * Ownership and authorization, nothing else: the bridge turns a client's scope into
 * the API's computer key and screen, mints a per-computer capability when a caller creates or
 * adopts a computer, keeps only its SHA-256 in memory, and serializes calls on one computer.
 * Naming a computer without its capability — or with a capability another client minted —
 * fails exactly like naming a missing one. Nothing is written to disk: after a restart callers
 * adopt again and get new capabilities.
 *
 * Each capability is a hold on its computer, ended by release (an MCP session's close, HTTP
 * `computer_release`) or destroy. Release without `keep` destroys the computer only if the hold
 * owns its disposal and no other hold remains:
 * - a hold owns disposal when its create made the computer (the API's `created: true`) or found
 *   no other hold on it in this bridge (a restarted bridge or harness adopting its own again);
 * - a hold adopted while another was live does not: its release leaves the computer running;
 * - an owning hold released without `keep` while others remain passes ownership to them, so the
 *   last of them disposes; released with `keep`, ownership ends and the computer outlives them.
 *
 * Memory stays bounded however often callers adopt:
 * - one client holds at most `HOLDS_PER_SCOPE` capabilities for one scope (key and screen): the
 *   next adoption evicts the oldest, which then answers `NOT_FOUND` like a revoked one (an owning
 *   evicted hold passes ownership to the newest on that computer);
 * - a destroyed computer's capabilities are remembered (their hashes, at most `DESTROYED_KEPT`
 *   for `DESTROYED_TTL_MS`) so a retried destroy answers like the API's idempotent one. Only a
 *   capability this bridge minted and saw destroyed gets that answer: any other is `NOT_FOUND`.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type ExternalClient, RakazoApiError } from "@rakazo/client";
import { BridgeError } from "./errors.ts";
import { identityOf, type Scope } from "./scope.ts";

/** Capabilities one client holds for one scope; the next adoption evicts the oldest. */
const HOLDS_PER_SCOPE = 8;
/** How many destroyed capabilities a retried destroy is recognised by, and for how long. */
const DESTROYED_KEPT = 4_096;
const DESTROYED_TTL_MS = 60 * 60 * 1_000;

interface Grant {
  readonly computerId: string;
  /** The API's computer key: with `screen`, the scope whose holds `HOLDS_PER_SCOPE` bounds. */
  readonly key: string;
  readonly screen: string;
  readonly hash: Buffer;
  /** The client that minted it: only that client's calls may present it. */
  readonly client: string;
  owns: boolean;
}

/** What a destroyed capability still proves: who held it, on which computer, until when. */
interface Destroyed {
  readonly computerId: string;
  readonly client: string;
  readonly hash: Buffer;
  readonly until: number;
}

const hashOf = (capability: string): Buffer => createHash("sha256").update(capability).digest();

export interface Held {
  readonly computerId: string;
  readonly capability: string;
}

type Target = { computerId: string; screen: string };

/** The computers one client reaches (`Computers.as`). */
export interface ClientComputers {
  readonly api: ExternalClient;
  create(scope: Scope): ReturnType<Computers["create"]>;
  list(scope: Scope): ReturnType<Computers["list"]>;
  use<T>(held: Held, work: (target: Target) => Promise<T>): Promise<T>;
  alongside<T>(held: Held, work: (target: Target) => Promise<T>): Promise<T>;
  destroy(held: Held): ReturnType<Computers["destroy"]>;
  release(held: Held, keep: boolean): ReturnType<Computers["release"]>;
}

export class Computers {
  readonly #api: ExternalClient;
  /** Capability hashes by hex digest (the lookup key is itself a hash, never the secret). */
  readonly #grants = new Map<string, Grant>();
  /** Destroyed capabilities by hex digest, oldest first. */
  readonly #destroyed = new Map<string, Destroyed>();
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #keyPrefix: string;

  constructor(api: ExternalClient, options: { readonly keyPrefix?: string | undefined } = {}) {
    this.#api = api;
    this.#keyPrefix = options.keyPrefix ?? "";
  }

  /** Create-or-adopt the scope's computer; the capability is returned here and never again. */
  async create(client: string, scope: Scope) {
    const { key, screen } = identityOf(scope, client, this.#keyPrefix);
    const made = await this.#call(() => this.#api.call("external/computer/create", { key, screen }));
    const capability = `rcap_${randomBytes(32).toString("base64url")}`;
    const hash = hashOf(capability);
    const computerId = made.computer.computerId;
    const owns = made.created || this.#holdsOn(computerId).length === 0;
    this.#grants.set(hash.toString("hex"), { computerId, key, screen, hash, client, owns });
    this.#evictOverCap(client, key, screen);
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
  async list(client: string, scope: Scope) {
    const { key } = identityOf(scope, client, this.#keyPrefix);
    const all = await this.#call(() => this.#api.call("external/computer/list", {}));
    return all.filter((computer) => computer.key === key);
  }

  /**
   * Runs `work` on the computer `held` names, one call per computer at a time. A missing, wrong
   * or revoked capability is NOT_FOUND, like an unknown computer (no existence oracle).
   */
  use<T>(client: string, held: Held, work: (target: Target) => Promise<T>): Promise<T> {
    // Hashed once per call; the queue checks the same digest again.
    const hash = hashOf(typeof held.capability === "string" ? held.capability : "");
    const grant = this.#grantFor(client, held, hash);
    const previous = this.#queues.get(grant.computerId) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(() => {
        // Checked again in the queue: a destroy queued before this call revoked it.
        const current = this.#grantFor(client, held, hash);
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
  alongside<T>(client: string, held: Held, work: (target: Target) => Promise<T>): Promise<T> {
    const grant = this.#grantFor(client, held);
    return this.#call(() => work({ computerId: grant.computerId, screen: grant.screen }));
  }

  /**
   * Destroys the computer and revokes every capability for it. Retried with a capability that
   * destroy revoked, it answers the API's idempotent answer again (`destroyed: false`).
   */
  async destroy(client: string, held: Held) {
    if (this.#wasDestroyed(client, held)) {
      const { computerId } = held;
      return this.#call(() => this.#api.call("external/computer/destroy", { computerId }));
    }
    return this.use(client, held, async ({ computerId }) => {
      const result = await this.#api.call("external/computer/destroy", { computerId });
      this.#revokeAll(computerId);
      return result;
    });
  }

  /**
   * Ends a caller's hold: `keep` leaves the computer for re-adoption; otherwise it is destroyed
   * if this hold owns its disposal and is the last (the header's rule), and `reason` says why not.
   */
  async release(client: string, held: Held, keep: boolean) {
    const grant = this.#grantFor(client, held);
    const others = this.#holdsOn(grant.computerId).filter((other) => other !== grant);
    if (!keep && grant.owns && others.length === 0) {
      return { kept: false, ...(await this.destroy(client, held)) };
    }
    this.#grants.delete(grant.hash.toString("hex"));
    if (keep) return { kept: true, computerId: grant.computerId };
    if (grant.owns) for (const other of others) other.owns = true;
    return { kept: true, computerId: grant.computerId, reason: grant.owns ? "held_elsewhere" : "not_owner" };
  }

  get api(): ExternalClient {
    return this.#api;
  }

  /** These computers as `client` sees them: every call is made as that client. */
  as(client: string): ClientComputers {
    return {
      api: this.#api,
      create: (scope) => this.create(client, scope),
      list: (scope) => this.list(client, scope),
      use: (held, work) => this.use(client, held, work),
      alongside: (held, work) => this.alongside(client, held, work),
      destroy: (held) => this.destroy(client, held),
      release: (held, keep) => this.release(client, held, keep),
    };
  }

  #grantFor(
    client: string,
    held: Held,
    hash: Buffer = hashOf(typeof held.capability === "string" ? held.capability : ""),
  ): Grant {
    const grant = this.#grants.get(hash.toString("hex"));
    // The map lookup is by hash; the constant-time comparison guards the final equality.
    if (
      !grant ||
      !timingSafeEqual(grant.hash, hash) ||
      grant.computerId !== held.computerId ||
      grant.client !== client
    ) {
      throw new BridgeError("NOT_FOUND", "computer not found");
    }
    return grant;
  }

  /** The live holds on one computer. */
  #holdsOn(computerId: string): Grant[] {
    return [...this.#grants.values()].filter((grant) => grant.computerId === computerId);
  }

  /** Revokes every capability for a destroyed computer, remembering them for a retried destroy. */
  #revokeAll(computerId: string): void {
    const now = Date.now();
    for (const [id, grant] of this.#grants) {
      if (grant.computerId !== computerId) continue;
      this.#grants.delete(id);
      this.#destroyed.delete(id);
      const { client, hash } = grant;
      this.#destroyed.set(id, { computerId, client, hash, until: now + DESTROYED_TTL_MS });
    }
    // Oldest first: drop the expired, then whatever is past the size bound.
    for (const [id, gone] of this.#destroyed) {
      if (gone.until > now && this.#destroyed.size <= DESTROYED_KEPT) break;
      this.#destroyed.delete(id);
    }
  }

  /** Whether `held` is a capability `client` held on that computer when this bridge destroyed it. */
  #wasDestroyed(client: string, held: Held): boolean {
    const hash = hashOf(typeof held.capability === "string" ? held.capability : "");
    const gone = this.#destroyed.get(hash.toString("hex"));
    return (
      gone !== undefined &&
      gone.until > Date.now() &&
      timingSafeEqual(gone.hash, hash) &&
      gone.computerId === held.computerId &&
      gone.client === client
    );
  }

  /** Past `HOLDS_PER_SCOPE` holds of one client on one scope, the oldest are evicted. */
  #evictOverCap(client: string, key: string, screen: string): void {
    const same = [...this.#grants.entries()].filter(
      ([, grant]) => grant.client === client && grant.key === key && grant.screen === screen,
    );
    for (const [id, evicted] of same.slice(0, Math.max(0, same.length - HOLDS_PER_SCOPE))) {
      this.#grants.delete(id);
      if (!evicted.owns) continue;
      // Ownership of disposal stays on the computer: with its newest hold.
      const heir = this.#holdsOn(evicted.computerId).at(-1);
      if (heir) heir.owns = true;
    }
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
        throw new BridgeError(error.code, error.message, error.status, error.details);
      }
      throw new BridgeError("BAD_GATEWAY", `the API could not be reached: ${(error as Error).message}`, 502);
    }
  }
}
