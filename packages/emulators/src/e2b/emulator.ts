/**
 * A loopback emulator of the E2B (and Novita) sandbox service that the REAL SDKs talk to
 * through their own configuration (`apiUrl`, `sandboxUrl`; docs/providers.md, "E2B" and "Novita").
 * One origin serves, in this order: hosted ports (`hosts.ts`), envd (`envd.ts`), and the
 * control plane behind `X-API-KEY` (`sandboxes.ts`), with the services' JSON error bodies
 * (`{code:<int>, message}`).
 * Every sandbox is a Docker container of the computer image with `--network none`; pause keeps
 * its filesystem and memory (`docker pause`), kill removes it, an expired TTL pauses or kills
 * as the create asked. The envd access token is issued at create and kept across pause and
 * resume, as the SDK's `sbx.connect()` (which keeps the token from create) needs.
 * A control call no route plays is refused 501 `{code: 501, message: "<METHOD> <path> is not
 * emulated"}` (e.g. `getMetrics`), never a 404 the SDK would read as "sandbox not found".
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type Docker from "dockerode";
import { hasKeyHeader, readBody } from "../http-util.ts";
import { NOT_EMULATED_STATUS, notEmulated, Router } from "../router.ts";
import type { EmulatedTemplates } from "../templates.ts";
import { createContainers, defaultDocker } from "./containers.ts";
import { RPC_PATH, serveFiles, serveHealth, serveRpc } from "./envd.ts";
import { hostTarget, proxyHttp, proxyUpgrade } from "./hosts.ts";
import { type ControlCall, sandboxRoutes } from "./sandboxes.ts";
import { ApiError, createState, type E2BState, expire, type Flavor, kill, sendApiError } from "./state.ts";

export { decodeMetadataQuery } from "./sandboxes.ts";
export type { Flavor } from "./state.ts";

export interface EmulatorOptions {
  readonly flavor?: Flavor;
  /** The computer image every template maps to. */
  readonly image: string;
  /** The API key the SDK must send (`X-API-KEY`). */
  readonly apiKey: string;
  readonly docker?: Docker;
  /** Labels on every container this emulator makes. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly host?: string;
  /** 0 (default) = an ephemeral port. */
  readonly port?: number;
  /** Concurrent sandboxes before create answers 429 (the service's limit). Default 20. */
  readonly maxSandboxes?: number;
  /** The domain in answers; `getHost(port)` = `<port>-<id>.<domain>`. */
  readonly domain?: string;
  /** Templates by name (./templates.ts): an image of their own and a boot command. */
  readonly templates?: EmulatedTemplates;
}

export interface E2BEmulator {
  /** The base URL for both `apiUrl` and `sandboxUrl`. */
  readonly url: string;
  readonly domain: string;
  /** `getHost(port)` → URL, for the adapter's `portUrlTemplate`. */
  readonly portUrlTemplate: string;
  /** What to export so an unmodified SDK (and the adapter) uses this emulator. */
  readonly env: Readonly<Record<string, string>>;
  /** The ids of live sandboxes. */
  sandboxes(): string[];
  /** Kills a sandbox behind the client's back (as when it expires or is removed elsewhere). */
  killSandbox(id: string): Promise<void>;
  /** Runs the sandbox's TTL action now (pause or kill, as created). */
  expire(id: string): Promise<void>;
  /** Removes every sandbox and stops listening. */
  close(): Promise<void>;
}

async function serve(
  state: E2BState,
  control: Router<ControlCall>,
  apiKey: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://emulator");
  const path = url.pathname;
  const target = hostTarget(state, request);
  if (target) return proxyHttp(state, request, response, target);
  if (RPC_PATH.test(path)) return serveRpc(state, path, request, response);
  if (path === "/files") return serveFiles(state, request, response, url);
  if (path === "/health") return serveHealth(state, request, response);
  if (!hasKeyHeader(request, "x-api-key", apiKey)) throw new ApiError(401, "Invalid API key");
  const raw =
    request.method === "POST" || request.method === "PUT" ? await readBody(request) : Buffer.alloc(0);
  const body = raw.length > 0 ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : {};
  const route = control.match(request.method ?? "GET", path);
  if (!route) throw new ApiError(NOT_EMULATED_STATUS, notEmulated(request.method, path));
  await route.run(request, response, url, { body });
}

export async function startE2BEmulator(options: EmulatorOptions): Promise<E2BEmulator> {
  const flavor = options.flavor ?? "e2b";
  const docker = options.docker ?? defaultDocker();
  const state = createState({
    flavor,
    containers: createContainers({
      docker,
      image: options.image,
      labels: { "rakazo-emulator.flavor": flavor, ...(options.labels ?? {}) },
      ...(options.templates ? { templates: options.templates } : {}),
    }),
    domain: options.domain ?? `${flavor}.emulator.localhost`,
    maxSandboxes: options.maxSandboxes ?? 20,
  });
  const control = new Router<ControlCall>();
  sandboxRoutes(control, state);

  const server = createServer((request, response) => {
    serve(state, control, options.apiKey, request, response).catch((error: unknown) => {
      const status = error instanceof ApiError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      if (!response.headersSent) sendApiError(response, status, message);
      else response.destroy();
    });
  });
  server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    proxyUpgrade(state, request, socket, head).catch(() => socket.destroy());
  });

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const address = server.address() as AddressInfo;
  const url = `http://${address.address}:${address.port}`;
  const portUrlTemplate = `${url}/hosts/{host}`;
  const prefix = flavor === "e2b" ? "E2B" : "NOVITA";

  return {
    url,
    domain: state.domain,
    portUrlTemplate,
    env: {
      [`${prefix}_API_URL`]: url,
      [`${prefix}_SANDBOX_URL`]: url,
      [`${prefix}_DOMAIN`]: state.domain,
      [`${prefix}_PORT_URL`]: portUrlTemplate,
    },
    sandboxes: () => [...state.sandboxes.keys()],
    killSandbox: async (id) => {
      await kill(state, id);
    },
    expire: (id) => expire(state, id),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      for (const id of [...state.sandboxes.keys()]) await kill(state, id);
    },
  };
}
