/**
 * Boat (boat.dev) on the shared remote runtime (CMP-8): a `RemoteBackend` over our REST client
 * (./client.ts; no SDK is on the registry). What must stay true:
 * - Create and resume send `noEnv: true` (no account env or secrets reach a computer) and a
 *   two-hour TTL; create carries a fresh `Idempotency-Key`, so a lost answer never bills two
 *   machines. Boat takes no labels: the machine is named `rakazo:<computer>:<home>` and found
 *   again by that name.
 * - The TTL is refreshed (PATCH `ttlSeconds`) by activity on the machine — the commands, file
 *   and port calls of a running computer — at most once per `ttlRefreshMs`; an idle computer
 *   makes no calls, so its TTL lapses and Boat archives it (the next provision resumes it).
 * - Stop archives (`archiving → archived`, the disk kept); open resumes the same id and waits
 *   for it to be usable. Resume rotates every protected-port token: `portUrl` asks `hostPort`
 *   (idempotent) each time and never reuses a URL from before.
 * - Gone is: 404/410, `error` and `cancelled` (no recover route), and an archived machine whose
 *   snapshot expired (resume answers 410) — reported `missing`, so the runtime replaces the
 *   machine and the caller restores the last checkpoint (PRV-3).
 * - The port URL carries `_token`: it is handed only to the web proxy (SCR-4), never logged.
 * - Commands run synchronously, capped by Boat at 600 s; a longer deadline is cut there.
 */
import { randomUUID } from "node:crypto";
import type { DesktopAdmissionSettings } from "../../desktop-admission.ts";
import { SandboxError } from "../../errors.ts";
import type { SandboxProvider, SandboxStatus } from "../../provider.ts";
import { createRemoteProvider } from "../../remote/remote-provider.ts";
import type { RemoteBackend, RemoteCreateRequest, RemoteMachine } from "../../remote/surface.ts";
import {
  BoatApiError,
  type BoatClient,
  type BoatSandbox,
  type BoatSandboxState,
  createBoatClient,
} from "./client.ts";

export interface BoatProviderConfig {
  /** `BOAT_API_KEY`: read by the worker and API only; sent only in the Authorization header. */
  readonly apiKey: string;
  /** `BOAT_API_URL`: default `https://boat.dev/api/v1`; the emulator's URL in tests. */
  readonly apiUrl?: string;
  readonly type?: "small" | "default" | "large";
  /** Default 7200 (two hours). */
  readonly ttlSeconds?: number;
  /** Minimum time between TTL refreshes of one machine; default 10 minutes. */
  readonly ttlRefreshMs?: number;
  readonly screenLimit?: number;
  /** The supervisor's desktop admission (CMP-5); unset fields keep its defaults. */
  readonly desktopAdmission?: DesktopAdmissionSettings;
  readonly supervisorBundle: () => Promise<Uint8Array>;
  /** Where the template/snapshot carries the bundle (RAKAZO_REMOTE_SUPERVISOR_IN_IMAGE). */
  readonly supervisorInImage?: string;
  /** Injected for tests (the emulated clock); default `Date.now`. */
  readonly now?: () => number;
  /** Injected for tests; default real sleeps. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Longest wait for a machine to become usable or archived; default 5 minutes. */
  readonly settleTimeoutMs?: number;
}

const USABLE: readonly BoatSandboxState[] = ["ready", "idle", "running"];
const STARTING: readonly BoatSandboxState[] = ["init", "provisioning", "provisioned", "cloning"];
const SYNC_COMMAND_CAP_SECONDS = 600;

export function machineName(request: Pick<RemoteCreateRequest, "computerId" | "homeKey">): string {
  return `rakazo:${request.computerId}:${request.homeKey}`;
}

/** Whether Boat can never bring this sandbox back (PRV-3: replace and restore). */
export function isGone(sandbox: BoatSandbox): boolean {
  return (
    sandbox.state === "error" ||
    sandbox.state === "cancelled" ||
    (sandbox.state === "archived" && sandbox.snapshotAvailable === false)
  );
}

function toSandboxError(error: unknown, what: string): Error {
  if (error instanceof SandboxError) return error;
  if (error instanceof BoatApiError) {
    if (error.gone && error.code !== "file_not_found") {
      return new SandboxError("SANDBOX_GONE", `${what}: ${error.message}`, { cause: error });
    }
    if (error.code === "file_not_found")
      return new SandboxError("FILE_NOT_FOUND", `${what}: ${error.message}`);
    if (error.code === "sandbox_not_ready") {
      return new SandboxError("SANDBOX_NOT_RUNNING", `${what}: ${error.message}`, { cause: error });
    }
    return new SandboxError("SANDBOX_PROVIDER_ERROR", `${what}: ${error.message}`, {
      cause: error,
      details: { status: error.status, code: error.code },
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxError("SANDBOX_PROVIDER_ERROR", `${what}: ${message}`, { cause: error });
}

export function createBoatBackend(
  config: Omit<BoatProviderConfig, "supervisorBundle">,
  client?: BoatClient,
): RemoteBackend {
  const boat =
    client ??
    createBoatClient({
      baseUrl: config.apiUrl ?? "https://boat.dev/api/v1",
      apiKey: config.apiKey,
      ...(config.sleep ? { sleep: config.sleep } : {}),
    });
  const now = config.now ?? Date.now;
  const sleep = config.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const ttlSeconds = config.ttlSeconds ?? 7200;
  const ttlRefreshMs = config.ttlRefreshMs ?? 10 * 60_000;
  const settleTimeoutMs = config.settleTimeoutMs ?? 5 * 60_000;
  /** When each machine's TTL was last set (create, resume or refresh). */
  const ttlSetAt = new Map<string, number>();

  const get = async (id: string): Promise<BoatSandbox | undefined> => {
    try {
      return await boat.get(id);
    } catch (error) {
      if (error instanceof BoatApiError && error.gone) return undefined;
      throw toSandboxError(error, `get ${id}`);
    }
  };

  /** Polls until the sandbox is usable (or archived, with `archived: true`). */
  const settle = async (id: string, until: "usable" | "archived"): Promise<BoatSandbox> => {
    const deadline = Date.now() + settleTimeoutMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      const sandbox = await get(id);
      if (!sandbox || isGone(sandbox)) throw new SandboxError("SANDBOX_GONE", `boat sandbox ${id} is gone`);
      if (until === "usable" && USABLE.includes(sandbox.state)) return sandbox;
      if (until === "archived" && sandbox.state === "archived") return sandbox;
      if (Date.now() > deadline) {
        throw new SandboxError("SANDBOX_PROVIDER_ERROR", `boat sandbox ${id} stayed ${sandbox.state}`);
      }
      await sleep(delay);
    }
  };

  /** Activity keeps the machine up: the TTL restarts from now, at most once per interval. */
  const refreshTtl = async (id: string) => {
    const last = ttlSetAt.get(id);
    if (last !== undefined && now() - last < ttlRefreshMs) return;
    ttlSetAt.set(id, now());
    await boat.update(id, { ttlSeconds }).catch((error: unknown) => {
      ttlSetAt.delete(id);
      throw toSandboxError(error, `refresh ttl ${id}`);
    });
  };

  const machine = (id: string): RemoteMachine => {
    const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
      try {
        await refreshTtl(id);
        return await fn();
      } catch (error) {
        throw toSandboxError(error, what);
      }
    };
    return {
      run: (command) =>
        call("command", async () => {
          const timeoutSeconds =
            command.timeoutMs === 0
              ? SYNC_COMMAND_CAP_SECONDS
              : Math.min(SYNC_COMMAND_CAP_SECONDS, Math.max(1, Math.ceil(command.timeoutMs / 1000)));
          const request = { command: command.command, timeoutSeconds };
          const onOutput = command.onOutput;
          const result = onOutput
            ? await boat.commandStream(id, request, onOutput)
            : await boat.command(id, request);
          // Boat's own deadline (the cap) is a deadline result, not an error.
          return {
            exitCode: result.timedOut ? 124 : result.exitCode,
            stdout: result.stdout,
            stderr: result.stderr,
          };
        }),
      readFile: (path) => call(`read ${path}`, async () => new Uint8Array(await boat.readFile(id, path))),
      writeFile: (path, data) => call(`write ${path}`, () => boat.writeFile(id, path, data)),
      // Asked every time: a resume rotates the token, and a stale URL must never be reused.
      portUrl: (port) =>
        call(`host ${port}`, async () => {
          const hosted = await boat.hostPort(id, port);
          return { url: hosted.url };
        }),
    };
  };

  const resumeAndSettle = async (id: string) => {
    try {
      await boat.resume(id, { noEnv: true, ttlSeconds });
    } catch (error) {
      // 410 snapshot_expired, 409 sandbox_not_resumable: Boat cannot bring it back.
      if (error instanceof BoatApiError && (error.gone || error.code === "sandbox_not_resumable")) {
        throw new SandboxError("SANDBOX_GONE", `resume ${id}: ${error.message}`, { cause: error });
      }
      throw toSandboxError(error, `resume ${id}`);
    }
    await settle(id, "usable");
    ttlSetAt.set(id, now());
  };

  return {
    kind: "boat",
    workspace: "/home/user/rakazo-home",
    userHome: "/home/user",

    async create(request) {
      let id: string | undefined;
      try {
        const created = await boat.create(
          { noEnv: true, ttlSeconds, ...(config.type ? { type: config.type } : {}) },
          { idempotencyKey: randomUUID() },
        );
        id = created.id;
        // The rename's answer says the state too: a sandbox already usable is not polled.
        const named = await boat.update(id, { name: machineName(request) });
        if (!USABLE.includes(named.state)) await settle(id, "usable");
        ttlSetAt.set(id, now());
        return { ref: id, machine: machine(id) };
      } catch (error) {
        // Nothing half-made is left behind.
        if (id) await boat.deleteAndWait(id).catch(() => undefined);
        throw toSandboxError(error, "create");
      }
    },

    async find(request) {
      const name = machineName(request);
      let all: BoatSandbox[];
      try {
        all = await boat.listAll();
      } catch (error) {
        throw toSandboxError(error, "list");
      }
      const mine = all.filter((s) => s.name === name && !isGone(s));
      return (mine.find((s) => USABLE.includes(s.state)) ?? mine[0])?.id;
    },

    async open(id) {
      const sandbox = await get(id);
      if (!sandbox || isGone(sandbox)) throw new SandboxError("SANDBOX_GONE", `boat sandbox ${id} is gone`);
      if (STARTING.includes(sandbox.state)) await settle(id, "usable");
      else if (sandbox.state === "archiving") {
        await settle(id, "archived");
        await resumeAndSettle(id);
      } else if (sandbox.state === "archived") await resumeAndSettle(id);
      return machine(id);
    },

    async state(id): Promise<SandboxStatus> {
      const sandbox = await get(id);
      if (!sandbox || isGone(sandbox)) return "missing";
      return sandbox.state === "archiving" || sandbox.state === "archived" ? "stopped" : "running";
    },

    async pause(id) {
      const sandbox = await get(id);
      if (!sandbox || isGone(sandbox)) throw new SandboxError("SANDBOX_GONE", `boat sandbox ${id} is gone`);
      if (sandbox.state === "archived") return;
      try {
        // A 409 race (a resume still settling) is retried by the client.
        await boat.stop(id);
      } catch (error) {
        throw toSandboxError(error, `stop ${id}`);
      }
      ttlSetAt.delete(id);
    },

    async kill(id) {
      ttlSetAt.delete(id);
      try {
        await boat.deleteAndWait(id);
      } catch (error) {
        throw toSandboxError(error, `delete ${id}`);
      }
    },
  };
}

export function createBoatProvider(config: BoatProviderConfig, client?: BoatClient): SandboxProvider {
  return createRemoteProvider({
    backend: createBoatBackend(config, client),
    supervisorBundle: config.supervisorBundle,
    ...(config.supervisorInImage !== undefined ? { supervisorInImage: config.supervisorInImage } : {}),
    ...(config.screenLimit !== undefined ? { screenLimit: config.screenLimit } : {}),
    ...(config.desktopAdmission !== undefined ? { desktopAdmission: config.desktopAdmission } : {}),
  });
}
