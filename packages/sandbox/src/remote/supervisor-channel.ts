/**
 * The host's persistent channel to a remote computer's supervisor (CMP-8): the daemon's RPC on
 * its gateway's hosted TCP port (infra/sandboxes/supervisor/src/gateway/rpc.ts), over kept-alive
 * HTTP connections, with the command path (`node supervisor.mjs <method>` through the provider's
 * exec) as the way in and the fallback. A warm call then costs an HTTP round trip through the
 * provider's port hosting instead of a process start in the machine.
 *
 * - The channel opens lazily: the daemon's key is read through the provider's file API and a
 *   `health` over the port confirms it. Until then (no daemon yet, port hosting that does not
 *   answer) calls take the command path, which also starts the daemon; a failed opening is
 *   tried again at most every `REOPEN_MS`. The key a start script printed (`startKey`) opens it
 *   without the probe, once: that script has just seen this daemon listening, and its gateway
 *   listens before its socket does (daemon.ts), so the first call goes straight to it; a stale
 *   one is a 401 like any other.
 * - 401 means the daemon restarted with a new key and did not run the call: the key is read
 *   again and the call retried once.
 * - Any other failure closes the channel. The call may have run, so only calls that are safe to
 *   repeat are sent again by the command path; the others fail with `DESKTOP_UNAVAILABLE`.
 *   A connection the provider refused outright, or its port auth refused (403), reached nothing
 *   and is always sent again.
 * The key lives in this process's memory only and travels in a header, never a URL or a log.
 */
import {
  gatewayUrl,
  SUPERVISOR_RPC_KEY_HEADER,
  SUPERVISOR_RPC_KEY_PATTERN,
  SUPERVISOR_RPC_PATH,
  type SupervisorMethod,
} from "@rakazo/protocol";
import { SandboxError } from "../errors.ts";
import { decodeAnswer, type SupervisorTransport } from "../supervisor-client.ts";
import type { RemotePortTarget } from "./surface.ts";

export interface SupervisorChannelOptions {
  /** The command path: starts the daemon, and carries calls while no channel is open. */
  readonly commands: SupervisorTransport;
  /** The gateway port's URL with the provider's auth headers. */
  readonly target: () => Promise<RemotePortTarget>;
  /** The daemon's `rpc.key`, read through the provider's file API. */
  readonly readKey: () => Promise<Uint8Array>;
  /** The key a start script printed having seen its daemon listen; taken once, then undefined. */
  readonly startKey?: () => Uint8Array | undefined;
  /** Per call; an observe of a new bot starts a desktop. */
  readonly timeoutMs: number;
  readonly now?: () => number;
}

/** How long after a failed opening calls keep to the command path before trying again. */
export const REOPEN_MS = 10_000;

/** Calls that change something a second run would change again: never re-sent after a failure. */
const UNSAFE_TO_REPEAT: ReadonlySet<SupervisorMethod> = new Set([
  "desktop.act",
  "page.act",
  "page.navigate",
  "process.start",
  "process.kill",
  "terminal.start",
]);

interface Channel {
  readonly target: RemotePortTarget;
  readonly key: string;
}

type Sent =
  | { readonly kind: "answer"; readonly answer: unknown }
  | { readonly kind: "unauthorized" }
  /** `delivered: false` when the connection was refused before anything was sent. */
  | { readonly kind: "failed"; readonly delivered: boolean; readonly error: Error };

export function supervisorChannel(options: SupervisorChannelOptions): SupervisorTransport {
  const now = options.now ?? Date.now;
  let live: Channel | undefined;
  let opening: Promise<Channel | undefined> | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;

  const send = async (open: Channel, method: string, params: unknown): Promise<Sent> => {
    let response: Response;
    try {
      response = await fetch(gatewayUrl(open.target.url, `${SUPERVISOR_RPC_PATH}${method}`), {
        method: "POST",
        headers: {
          ...open.target.headers,
          "content-type": "application/json",
          [SUPERVISOR_RPC_KEY_HEADER]: open.key,
        },
        body: JSON.stringify(params ?? {}),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      return { kind: "failed", delivered: code !== "ECONNREFUSED", error: error as Error };
    }
    if (response.status === 401) {
      await response.body?.cancel();
      return { kind: "unauthorized" };
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      // 403 is the provider's port auth refusing (the gateway never answers it): nothing ran.
      const delivered = response.status !== 403;
      return { kind: "failed", delivered, error: new Error(`HTTP ${response.status}`) };
    }
    try {
      return { kind: "answer", answer: await response.json() };
    } catch (error) {
      return { kind: "failed", delivered: true, error: error as Error };
    }
  };

  const open = async (): Promise<Channel | undefined> => {
    try {
      const printed = options.startKey?.();
      const key = Buffer.from(printed ?? (await options.readKey()))
        .toString("utf8")
        .trim();
      if (!SUPERVISOR_RPC_KEY_PATTERN.test(key)) return undefined;
      const opened: Channel = { target: await options.target(), key };
      if (printed) return opened;
      const probe = await send(opened, "health", {});
      if (probe.kind !== "answer") return undefined;
      decodeAnswer("health", probe.answer);
      return opened;
    } catch {
      return undefined;
    }
  };

  /** The open channel, opening it unless an opening failed within `REOPEN_MS`. */
  const current = async (): Promise<Channel | undefined> => {
    if (live) return live;
    if (now() - failedAt < REOPEN_MS) return undefined;
    opening ??= open().then((opened) => {
      opening = undefined;
      if (opened) live = opened;
      else failedAt = now();
      return opened;
    });
    return opening;
  };

  return {
    async call(method, params) {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const opened = await current();
        if (!opened) break;
        const sent = await send(opened, method, params);
        if (sent.kind === "answer") return decodeAnswer(method, sent.answer);
        if (live === opened) live = undefined;
        // A restarted daemon (401): read its new key now, not after REOPEN_MS.
        if (sent.kind === "unauthorized") continue;
        failedAt = now();
        if (sent.error.name === "TimeoutError") {
          throw new SandboxError("DESKTOP_UNAVAILABLE", `${method}: supervisor timed out`, {
            cause: sent.error,
          });
        }
        if (sent.delivered && UNSAFE_TO_REPEAT.has(method)) {
          throw new SandboxError(
            "DESKTOP_UNAVAILABLE",
            `${method}: the connection to the supervisor failed mid-call (${sent.error.message}); it may have run`,
            { cause: sent.error },
          );
        }
        break;
      }
      return options.commands.call(method, params);
    },
  };
}
