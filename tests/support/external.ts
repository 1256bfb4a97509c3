/**
 * The external stack: a control plane on real Docker computers (or the fake
 * provider, for suites that need no machine) with the external surface on, its API served over
 * real HTTP on an ephemeral loopback port, and the bridge as a real child process (so
 * restarting it loses its memory like a real restart). `leftovers()` says what a suite left
 * behind: containers (computers, their egress proxies, the data dir's host-address watcher),
 * live computer rows, external keys.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type ServerType, serve } from "@hono/node-server";
import { createExternalClient } from "@rakazo/client";
import { computers, externalComputers } from "@rakazo/db";
import { registerLogSecret } from "@rakazo/log/testing";
import { createProvider } from "@rakazo/sandbox";
import { COMPUTER_IMAGE } from "./docker.ts";
import { type Child, killHard, startChild } from "./processes.ts";
import { createTestSystem, eventually, type TestSystem } from "./system.ts";

const run = promisify(execFile);

export interface ExternalStackOptions {
  /** Real Docker computers (the default) or the fake provider's. */
  readonly provider?: "docker" | "fake";
  /** Named bridge clients besides `default`, each given a token of its own (BRIDGE_TOKENS_FILE). */
  readonly clients?: readonly string[];
  /** More of the bridge's environment, e.g. BRIDGE_MCP_IDLE_SECONDS. */
  readonly bridgeEnv?: Readonly<Record<string, string>>;
}

export interface ExternalStack {
  readonly system: TestSystem;
  readonly externalToken: string;
  /** The client `default`'s token (BRIDGE_TOKEN). */
  readonly bridgeToken: string;
  /** Each named client's token. */
  readonly clientTokens: Readonly<Record<string, string>>;
  readonly apiUrl: string;
  bridgeUrl(): string;
  /** POST /v1/<tool> on the bridge with `token` (BRIDGE_TOKEN by default). */
  bridge(tool: string, body: unknown, token?: string): Promise<{ status: number; json: any }>;
  /** kill -9 and start again: a bridge with no memory of anything. */
  restartBridge(): Promise<void>;
  /** Destroys every external computer through the API (cleanup after a failed test). */
  destroyAll(): Promise<void>;
  leftovers(): Promise<{ containers: string[]; liveComputers: string[]; keys: string[] }>;
  close(): Promise<void>;
}

async function startBridge(env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = startChild("apps/bridge/src/main.ts", env);
  const port = await eventually(async () => {
    if (child.process.exitCode !== null) throw new Error(`bridge exited early:\n${child.output.join("")}`);
    const line = child.output
      .join("")
      .split("\n")
      .find((l) => l.includes('"msg":"bridge.listening"'));
    return line ? (JSON.parse(line) as { port: number }).port : undefined;
  }, 30_000);
  return { child, url: `http://127.0.0.1:${port}` };
}

export async function startExternalStack(options: ExternalStackOptions = {}): Promise<ExternalStack> {
  const docker = (options.provider ?? "docker") === "docker";
  const externalToken = `ext_${randomBytes(24).toString("hex")}`;
  const bridgeToken = `brg_${randomBytes(24).toString("hex")}`;
  registerLogSecret(bridgeToken, "BRIDGE_TOKEN");
  const clientTokens: Record<string, string> = {};
  for (const name of options.clients ?? []) {
    clientTokens[name] = `brg_${name}_${randomBytes(24).toString("hex")}`;
    registerLogSecret(clientTokens[name], `bridge client ${name}'s token`);
  }
  const tokensDir = await mkdtemp(join(tmpdir(), "rakazo-bridge-"));
  const tokensFile = join(tokensDir, "tokens");
  await writeFile(
    tokensFile,
    Object.entries(clientTokens)
      .map(([name, token]) => `${name} sha256:${createHash("sha256").update(token).digest("hex")}\n`)
      .join(""),
  );
  const system = await createTestSystem({
    externalToken,
    ...(docker
      ? { provider: (dataDir: string) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }) }
      : {}),
  });
  await system.startWorker();
  const server: ServerType = await new Promise((ready) => {
    const s = serve({ fetch: system.app.fetch, hostname: "127.0.0.1", port: 0 }, () => ready(s));
  });
  const address = server.address();
  const apiUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const bridgeEnv = {
    BRIDGE_TOKEN: bridgeToken,
    RAKAZO_EXTERNAL_TOKEN: externalToken,
    RAKAZO_API_URL: apiUrl,
    BRIDGE_HOST: "127.0.0.1",
    BRIDGE_PORT: "0",
    ...(options.clients?.length ? { BRIDGE_TOKENS_FILE: tokensFile } : {}),
    ...options.bridgeEnv,
  };
  let bridge = await startBridge(bridgeEnv);

  return {
    system,
    externalToken,
    bridgeToken,
    clientTokens,
    apiUrl,
    bridgeUrl: () => bridge.url,
    async bridge(tool, body, token = bridgeToken) {
      const res = await fetch(`${bridge.url}/v1/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() };
    },
    async restartBridge() {
      await killHard(bridge.child);
      bridge = await startBridge(bridgeEnv);
    },
    async destroyAll() {
      const api = createExternalClient({ baseUrl: apiUrl, token: externalToken });
      for (const c of await api.call("external/computer/list", {})) {
        await api.call("external/computer/destroy", { computerId: c.computerId });
      }
    },
    async leftovers() {
      const ids = (
        await system.ctx.db.select({ id: computers.id, state: computers.state }).from(computers)
      ).filter((c) => c.state !== "deleted" && c.state !== "unprovisioned");
      const keys = await system.ctx.db.select({ key: externalComputers.key }).from(externalComputers);
      const containers: string[] = [];
      for (const row of docker ? await system.ctx.db.select({ id: computers.id }).from(computers) : []) {
        const { stdout } = await run("docker", ["ps", "-aq", "--filter", `label=rakazo.computer=${row.id}`]);
        if (stdout.trim()) containers.push(row.id);
        const proxy = await run("docker", ["ps", "-aq", "--filter", `label=rakazo.egress-of=${row.id}`]);
        if (proxy.stdout.trim()) containers.push(`${row.id} egress proxy`);
      }
      // The data dir's host-address watcher goes with its last egress proxy.
      const watcherDir = join(system.dataDir, "run", "host-addresses");
      const watcher = docker
        ? await run("docker", ["ps", "-aq", "--filter", `label=rakazo.host-addresses=${watcherDir}`])
        : { stdout: "" };
      if (watcher.stdout.trim()) containers.push("host-address watcher");
      return { containers, liveComputers: ids.map((c) => c.id), keys: keys.map((k) => k.key) };
    },
    async close() {
      await killHard(bridge.child);
      await new Promise((done) => server.close(done));
      await system.close();
      await rm(tokensDir, { recursive: true, force: true });
    },
  };
}

/**
 * A bash command that starts a tiny page server inside the computer (it has no network, and the
 * browser opens only http(s)): `/set?who=X` sets a cookie, any other path answers a page whose
 * title is the cookie it got ("none" without one) and whose body says "hello external".
 */
export function pageServerCommand(port: number): string {
  const script = `require("http").createServer((q, s) => {
    const who = new URL(q.url, "http://x").searchParams.get("who");
    if (who) s.setHeader("set-cookie", "who=" + who + "; Path=/");
    s.setHeader("content-type", "text/html");
    s.end("<title>" + (who ? "set" : (q.headers.cookie || "none")) + "</title><p>hello external</p><button>Go</button>");
  }).listen(${port}, "127.0.0.1")`;
  // Waits until the port answers: node starts slowly on a loaded machine.
  const ready = `for i in $(seq 1 150); do (echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && exit 0; sleep 0.2; done; exit 1`;
  return `setsid node -e '${script}' >/dev/null 2>&1 < /dev/null & ${ready}`;
}
