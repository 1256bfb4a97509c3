/**
 * A loopback Daytona control plane and toolbox for the REAL `@daytonaio/sdk` (0.218.0): the SDK
 * is pointed at it through `apiUrl`, and reaches the toolbox through the `toolboxProxyUrl` and
 * preview links this server returns (docs/providers.md, "Daytona").
 * Every sandbox is a real container of the computer image (`../machines.ts`). Every call needs
 * the bearer key; `/api/…` is the control plane (`sandboxes.ts`), `/toolbox/<id>/…` the toolbox
 * (`toolbox.ts`); a call no route plays answers 501 in Daytona's error shape, code `NOT_EMULATED`.
 *
 * Played faithfully: create answers `started`; stop → `stopped`; start restarts the container
 * and resets every standard preview token; delete → `destroyed` (GET still shows it, list does
 * not); unknown ids are 404 `{statusCode, message, code}`; preview links are private unless the
 * sandbox is public; session logs are followable over a websocket; auto-stop and TTL act on the
 * injected clock (`sweep()`).
 * The SDK's default event stream is served (socket.io, `events.ts`): its state waits hear
 * `sandbox.state.updated`, and a process using it exits once done.
 * Not played: snapshots and builds (the
 * image is the computer image), PTYs, computer-use (Rakazo drives its own supervisor), and a
 * session's shell state between commands (each command runs in a fresh `bash -c`).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { hasBearer, recordRequest } from "../http-util.ts";
import type { MachinePool } from "../machines.ts";
import { NOT_EMULATED_STATUS, notEmulated, Router } from "../router.ts";
import { attachEventStream, EVENTS_PATH } from "./events.ts";
import { sandboxRoutes } from "./sandboxes.ts";
import {
  closeListeners,
  type Daytona,
  type DaytonaState,
  destroySandbox,
  fail,
  stopSandbox,
} from "./state.ts";
import { followLogs, toolboxRoutes } from "./toolbox.ts";

export interface DaytonaEmulatorOptions {
  readonly machines: MachinePool;
  readonly apiKey: string;
  readonly now?: () => number;
}

export interface DaytonaEmulator {
  /** The `apiUrl` to hand the SDK. */
  readonly apiUrl: string;
  /** Applies auto-stop and TTL at `now()`; returns the ids acted on. */
  sweep(): Promise<string[]>;
  /** Removes a sandbox entirely behind the client's back (GET answers 404). */
  vanish(id: string): Promise<void>;
  inspect(
    id: string,
  ): { state: DaytonaState; lastActivity: number; labels: Record<string, string> } | undefined;
  /** Every request: method, path without query, status (the secret scan reads these too). */
  readonly requests: readonly { method: string; path: string; status: number }[];
  close(): Promise<void>;
}

export async function startDaytonaEmulator(options: DaytonaEmulatorOptions): Promise<DaytonaEmulator> {
  const now = options.now ?? Date.now;
  const daytona: Daytona = {
    machines: options.machines,
    now,
    sandboxes: new Map(),
    requests: [],
    origin: "",
    emit: () => undefined,
  };
  const control = new Router();
  sandboxRoutes(control, daytona);
  const toolbox = new Router();
  toolboxRoutes(toolbox, daytona);

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://daytona.invalid");
    recordRequest(daytona.requests, request, response, url.pathname);
    if (!hasBearer(request, options.apiKey)) {
      request.resume();
      return fail(response, 401, "Unauthorized");
    }
    const method = request.method ?? "GET";
    const route = url.pathname.startsWith("/api/")
      ? control.match(method, url.pathname.slice(4))
      : toolbox.match(method, url.pathname);
    if (!route) {
      request.resume();
      return fail(response, NOT_EMULATED_STATUS, notEmulated(method, url.pathname), "NOT_EMULATED");
    }
    route.run(request, response, url, {}).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else fail(response, 500, error instanceof Error ? error.message : String(error));
    });
  });

  const events = attachEventStream(server, options.apiKey);
  daytona.emit = events.emit;
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (request, socket: Duplex, head) => {
    // socket.io answers its own upgrades (events.ts).
    if (new URL(request.url ?? "/", "http://daytona.invalid").pathname === EVENTS_PATH) return;
    followLogs(daytona, wss, options.apiKey, request, socket, head);
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  daytona.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl: `${daytona.origin}/api`,
    requests: daytona.requests,
    async sweep() {
      const acted: string[] = [];
      for (const s of daytona.sandboxes.values()) {
        if (s.state === "started" && s.destroyAt !== null && s.destroyAt <= now()) {
          await destroySandbox(daytona, s);
          acted.push(s.id);
        } else if (
          s.state === "started" &&
          s.autoStopInterval > 0 &&
          s.lastActivity + s.autoStopInterval * 60_000 <= now()
        ) {
          await stopSandbox(daytona, s);
          acted.push(s.id);
        }
      }
      return acted;
    },
    async vanish(id) {
      const s = daytona.sandboxes.get(id);
      if (!s) return;
      await closeListeners(s);
      await options.machines.remove(s.containerId);
      daytona.sandboxes.delete(id);
    },
    inspect(id) {
      const s = daytona.sandboxes.get(id);
      return s ? { state: s.state, lastActivity: s.lastActivity, labels: { ...s.labels } } : undefined;
    },
    async close() {
      for (const s of daytona.sandboxes.values()) {
        await closeListeners(s);
        await options.machines.remove(s.containerId);
      }
      daytona.sandboxes.clear();
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      // Disconnects every SDK's event socket and closes the server.
      await events.close();
    },
  };
}
