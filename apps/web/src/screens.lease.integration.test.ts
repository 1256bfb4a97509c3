/**
 * A control capability dies with its lease (TKO-1, CMP-3), end to end:
 * Postgres + API + web proxy + the real supervisor daemon on this host (its gateway on a Unix
 * socket). A live control websocket through the proxy closes within a second of the control
 * lease expiring, of releaseControl, and of run/start on that bot.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  createFakeProvider,
  createSupervisedDesktop,
  createSupervisedScreens,
  type Sandbox,
  type SandboxProvider,
  unixSocketTransport,
} from "@rakazo/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type ScreenSystem, startScreenSystem } from "./testing/screen-system.ts";

const TOOLS = ["Xvfb", "x11vnc", "xdotool", "chromium"];
const missing = TOOLS.filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
if (missing.length > 0 && process.env.CI === "true") {
  throw new Error(`control lease test needs ${missing.join(", ")} (apt-get install -y ${missing.join(" ")})`);
}
const supervisorCli = fileURLToPath(
  new URL("../../../infra/sandboxes/supervisor/src/daemon/cli.ts", import.meta.url),
);
/** How soon a revoked control connection must be closed. */
const CLOSE_WITHIN_MS = 1000;

describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `control websockets end with the control lease — skipped, missing: ${missing.join(", ")}`
    : "control websockets end with the control lease",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rkz-lease-it-"));
    const runDir = path.join(root, "run");
    const displayBase = 650 + Math.floor(Math.random() * 90);
    const flags = [
      `--run-dir=${runDir}`,
      `--workspace=${path.join(root, "home")}`,
      `--display-base=${displayBase}`,
      `--debug-port-base=${23000 + displayBase}`,
      `--log-dir=${path.join(root, "logs")}`,
      `--gateway-listen=unix:${path.join(runDir, "gateway.sock")}`,
    ];
    const transport = unixSocketTransport(path.join(runDir, "supervisor.sock"));
    const fake = createFakeProvider({ rootDir: path.join(root, "fake") });
    const desktop = createSupervisedDesktop(transport);
    const screens = createSupervisedScreens(transport, async () => ({
      transport: "unix",
      socketPath: path.join(runDir, "gateway.sock"),
    }));
    const provider: SandboxProvider = {
      ...fake,
      capabilities: { ...fake.capabilities, desktop: true },
      sandbox: (ref): Sandbox => ({ ...fake.sandbox(ref), desktop, screens }),
    };
    let system: ScreenSystem;
    let tenant: Awaited<ReturnType<ScreenSystem["tenant"]>>;
    let computerId: string;

    const rpc = async (name: string, body: Record<string, unknown>) => {
      const res = await system.rpc(name, { computerId, botId: tenant.botId, ...body }, tenant.token);
      expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
      return res.json.result;
    };

    /** Takes control, opens a control websocket through the proxy; resolves with it and its close. */
    const controlSocket = async (ttlMs?: number) => {
      const lease = await rpc("computer/takeControl", ttlMs ? { ttlMs } : {});
      const { url } = await rpc("computer/screenUrl", { policy: "control" });
      const ws = new WebSocket(`${url.replace(/^http/, "ws")}websockify`);
      const closed = new Promise<{ code: number; at: number }>((resolve) =>
        ws.once("close", (code) => resolve({ code, at: Date.now() })),
      );
      await new Promise((resolve, reject) => {
        ws.once("open", resolve);
        ws.once("error", reject);
      });
      return { ws, closed, lease: lease as { expiresAt: string } };
    };

    beforeAll(async () => {
      await new Promise<void>((resolve, reject) =>
        execFile(process.execPath, [supervisorCli, "health", "{}", ...flags], (error, stdout, stderr) =>
          error ? reject(new Error(stdout + stderr)) : resolve(),
        ),
      );
      system = await startScreenSystem({ provider });
      tenant = await system.tenant("lea");
      computerId = await system.runningComputer(tenant.spaceId, tenant.token);
      // The bot's desktop is started here, not inside the 3 s lease of the first test: a cold
      // Xvfb + Chromium start can take longer than that lease on a busy host.
      await rpc("computer/observe", {});
    }, 120_000);

    afterAll(async () => {
      await system?.close();
      try {
        process.kill(Number(readFileSync(path.join(runDir, "supervisor.pid"), "utf8")), "SIGTERM");
      } catch {
        // not running
      }
      await new Promise((r) => setTimeout(r, 1500));
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    it("closes when the control lease expires", async () => {
      const { ws, closed, lease } = await controlSocket(3000);
      const expiresAt = Date.parse(lease.expiresAt);
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now() - 500)));
      expect(ws.readyState).toBe(WebSocket.OPEN); // not before its time
      const { code, at } = await closed;
      expect(code).toBe(4003);
      expect(at - expiresAt).toBeLessThan(CLOSE_WITHIN_MS);
    }, 30_000);

    it("closes when control is released", async () => {
      const { closed } = await controlSocket();
      const released = Date.now();
      await rpc("computer/releaseControl", {});
      const { code, at } = await closed;
      expect(code).toBe(4001);
      expect(at - released).toBeLessThan(CLOSE_WITHIN_MS);
    }, 30_000);

    it("closes when a run starts on that bot", async () => {
      const { closed } = await controlSocket();
      const started = Date.now();
      await rpc("run/start", {});
      const { code, at } = await closed;
      expect(code).toBe(4001);
      expect(at - started).toBeLessThan(CLOSE_WITHIN_MS);
    }, 30_000);
  },
);
