/**
 * The browser terminal on a real Docker computer in real Chromium (TRM-4..6): the web service's
 * xterm.js page, its websocket through the proxy to the computer's gateway (`/v1/pty`), a shell
 * from the supervisor's PTY server. The authority is in-process (mint → gateway ticket → the
 * sandbox's gateway target) like screens.docker.test.ts; the RPC rules (control lease, foreign
 * ids) are tests/files/terminal-and-files.test.ts's.
 *
 * Skipped locally (fails under CI=true) without a Docker engine, the computer image or host
 * Chromium; rebuild the image (infra/sandboxes/image/build.sh) after changing the supervisor.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@rakazo/log";
import {
  createSupervisedDesktop,
  createSupervisedScreens,
  createSupervisedTerminal,
  type SandboxProvider,
  SUPERVISOR_CLI_COMMAND,
  type SupervisorTransport,
  unixSocketTransport,
} from "@rakazo/sandbox";
import { createDockerProvider, type DockerDesktopContext } from "@rakazo/sandbox/docker";
import { requireDocker } from "@rakazo/sandbox/testing";
import {
  gatewayKeysFor,
  gatewayTicket,
  generateScreenKeys,
  mintScreenCapability,
  openScreenCapability,
  parseScreenKeys,
  type ScreenPolicy,
} from "@rakazo/screens";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScreenAuthority } from "./authority.ts";
import { startWebServer, type WebServer } from "./server.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const gate = await requireDocker("the browser terminal on a Docker computer in Chromium", [
  CHROMIUM.executablePath,
]);

function transportOf(context: DockerDesktopContext): SupervisorTransport {
  let transport: Promise<SupervisorTransport> | undefined;
  return {
    call: async (method, params) => {
      transport ??= context.hostRuntimeDir().then((dir) =>
        unixSocketTransport(path.join(dir, "supervisor.sock"), {
          startSupervisor: async () => {
            await context.exec({ argv: [...SUPERVISOR_CLI_COMMAND, "health", "{}"], timeoutMs: 30_000 });
          },
        }),
      );
      return (await transport).call(method, params);
    },
  };
}

describe.skipIf(gate.skip)(gate.title, { timeout: 120_000 }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "rkz-i17-terminal-"));
  const keyring = parseScreenKeys(generateScreenKeys("k1"));
  const computerId = `cmp_i17term${Date.now().toString(36)}`;
  const botId = "bot_i17terminal00000000";
  const logLines: string[] = [];
  let provider: SandboxProvider;
  let ref: string;
  let web: WebServer;
  let browser: Browser;
  let slot: { index: number; generation: number };

  const sandbox = () => provider.sandbox(ref);
  const capability = (policy: ScreenPolicy, overrides: { botId?: string; ttlMs?: number } = {}) =>
    mintScreenCapability(keyring, {
      computerId,
      botId: overrides.botId ?? botId,
      slot: slot.index,
      generation: slot.generation,
      policy,
      subject: "usr_t",
      ...(overrides.ttlMs !== undefined ? { ttlMs: overrides.ttlMs } : {}),
    });
  const terminalUrl = (
    policy: ScreenPolicy = "terminal",
    overrides: { botId?: string; ttlMs?: number } = {},
  ) => `${web.url}/terminals/${capability(policy, overrides).token}/`;

  beforeAll(async () => {
    provider = createDockerProvider({
      image: IMAGE,
      dataDir,
      labelPrefix: "rakazo-i17",
      desktop: (context) => createSupervisedDesktop(transportOf(context)),
      screens: (context) =>
        createSupervisedScreens(transportOf(context), async () => ({
          transport: "unix",
          socketPath: path.join(await context.hostRuntimeDir(), "gateway.sock"),
        })),
      terminal: (context) => createSupervisedTerminal(transportOf(context)),
    });
    ref = (await provider.provision({ computerId, mode: "team", homeKey: `home-i17-${Date.now()}` })).ref;
    const authority: ScreenAuthority = {
      async authorize(token) {
        const opened = openScreenCapability(keyring, token);
        if (!opened.ok) return { ok: false, reason: "authority_rejected", detail: opened.reason };
        const screens = sandbox().screens;
        if (!screens) return { ok: false, reason: "authority_rejected" };
        return {
          ok: true,
          target: (await screens.target()) as never,
          ticket: gatewayTicket(keyring, opened.claims),
          policy: opened.claims.policy,
        };
      },
    };
    web = await startWebServer({
      authority,
      log: createLogger({ level: "debug", write: (l) => logLines.push(l) }),
      host: "127.0.0.1",
      port: 0,
    });
    browser = await chromium.launch(CHROMIUM);
    const desktop = sandbox().desktop;
    if (!desktop) throw new Error("no desktop");
    slot = (await desktop.observe(botId)).slot;
    await sandbox().screens?.configure(gatewayKeysFor(keyring, computerId));
    await sandbox().exec({ argv: ["mkdir", "-p", `bots/${botId}`] });
    await sandbox().connectTerminal?.({ botId, slot, cwd: `bots/${botId}` });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await web?.close();
    if (ref) await provider.destroy(ref);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const screenText = (page: Page) =>
    page.evaluate(() => {
      const term = (globalThis as any).__rakazoTerminal;
      const buffer = term.buffer.active;
      const lines: string[] = [];
      for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
      return lines.join("\n");
    });

  const openTab = async (url: string): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    await page.goto(url);
    await page.waitForSelector("html[data-status=connected]", { timeout: 30_000 });
    return page;
  };

  const until = async <T>(read: () => Promise<T | undefined>, ms = 20_000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it("types whoami; id -u; pwd through proxy and gateway and reads the workspace user in the bot's folder; a second tab gets its own shell", async () => {
    const first = await openTab(terminalUrl());
    await first.keyboard.type("whoami; id -u; pwd; echo PID=$$\n", { delay: 10 });
    const [user, uid, cwd, pid] = await until(async () => {
      const match = /\n(\w+)\s*\n(\d+)\s*\n(\/\S+)\s*\nPID=(\d+)/.exec(await screenText(first));
      return match ? [match[1], Number(match[2]), match[3], Number(match[4])] : undefined;
    });
    expect(user).toBe("user");
    expect(uid).toBe(1000);
    expect(cwd).toBe(`/home/user/rakazo-home/bots/${botId}`);

    const second = await openTab(terminalUrl());
    await second.keyboard.type("echo PID=$$\n", { delay: 10 });
    const otherPid = await until(async () => {
      const match = /\nPID=(\d+)/.exec(await screenText(second));
      return match ? Number(match[1]) : undefined;
    });
    expect(otherPid).not.toBe(pid);
    const sessions = await sandbox().exec({ argv: ["sh", "-c", "ls /run/rakazo/terminals | wc -l"] });
    expect(Number(sessions.stdout.trim())).toBe(2);

    // Releasing control: the services revoke the bot's control and terminal capabilities and stop
    // its PTY server (revoke.ts); both tabs close within a second and the session files go.
    const started = performance.now();
    const { closed } = (await sandbox().stopTerminal?.({ botId })) ?? { closed: 0 };
    expect(closed).toBe(2);
    for (const page of [first, second]) {
      await page.waitForSelector("html[data-status=closed]", { timeout: 1000 });
    }
    expect(performance.now() - started).toBeLessThan(1000);
    // The sockets close at once; the shells get SIGHUP and are reaped within the supervisor's
    // 600 ms bound (terminal-server.ts), so their processes may outlive the answer briefly.
    const left = async () =>
      (
        await sandbox().exec({
          argv: ["sh", "-c", `ls -A /run/rakazo/terminals; ps -o pid= -p ${pid},${otherPid} || true`],
        })
      ).stdout.trim();
    await until(async () => ((await left()) === "" ? true : undefined), 2000).catch(async () => {
      expect(await left(), "session files and shells left 2 s after the stop").toBe("");
    });
    await first.close();
    await second.close();
    await sandbox().connectTerminal?.({ botId, slot, cwd: `bots/${botId}` });
  });

  it("refuses expired, view, control and another bot's capabilities, logged with the reason", async () => {
    const statusOf = async (url: string) => (await fetch(url)).status;
    const expired = capability("terminal", { ttlMs: 1 });
    await new Promise((r) => setTimeout(r, 20));
    expect(await statusOf(`${web.url}/terminals/${expired.token}/`)).toBe(403);
    expect(await statusOf(terminalUrl("view"))).toBe(403);
    expect(await statusOf(terminalUrl("control"))).toBe(403);
    // Another bot's: its terminal server was never started (and its slot is this bot's).
    expect(
      await statusOf(terminalUrl("terminal", { botId: "bot_i17otherbot000000000" })),
    ).toBeGreaterThanOrEqual(403);
    // The websocket route holds the same rules.
    const page = await browser.newPage();
    await page.goto(`${web.url}/health`);
    const wsStatus = await page.evaluate(
      (url) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(url);
          ws.onopen = () => resolve("open");
          ws.onerror = () => resolve("refused");
        }),
      `${terminalUrl("control").replace(/^http/, "ws")}pty`,
    );
    expect(wsStatus).toBe("refused");
    await page.close();
    const lines = logLines.join("\n");
    expect(lines).toMatch(/"screen.authority_reason":"expired"/);
    expect(lines).toMatch(/"screen.reason":"wrong_policy"/);
    expect(lines).not.toMatch(/rs1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}/);
  });
});
