/**
 * The whole screen path without Docker: real Postgres and API (authority), the web service,
 * real Chromium (playwright-core) running noVNC, and the real supervisor daemon on this host
 * (Xvfb + Chromium + x11vnc + its screen gateway on a Unix socket). Skipped, with the missing
 * tools named, on hosts without them; under CI=true that fails instead.
 */
import { execFile } from "node:child_process";
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
import { missingOrFail } from "@rakazo/sandbox/testing";
import { mintScreenCapability } from "@rakazo/screens";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createAuthorityClient } from "./authority.ts";
import { greenPixel, openScreen as openScreenIn, typeIntoScreen } from "./testing/screen-browser.ts";
import { CHROMIUM, GREEN_PAGE, type ScreenSystem, startScreenSystem } from "./testing/screen-system.ts";

const TOOLS = ["Xvfb", "x11vnc", "xdotool", "/usr/bin/chromium"];
const missing = missingOrFail("screens through proxy and gateway", TOOLS);
const supervisorCli = fileURLToPath(
  new URL("../../../infra/sandboxes/supervisor/src/daemon/cli.ts", import.meta.url),
);

// Every test in this file runs against one daemon, one computer, one bot.
describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `screens through proxy and gateway — skipped, missing: ${missing.join(", ")}`
    : "screens through proxy and gateway",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rkz-web-it-"));
    const runDir = path.join(root, "run");
    const displayBase = 500 + Math.floor(Math.random() * 140);
    const flags = [
      `--run-dir=${runDir}`,
      `--workspace=${path.join(root, "home")}`,
      `--display-base=${displayBase}`,
      `--debug-port-base=${21000 + displayBase}`,
      `--log-dir=${path.join(root, "logs")}`,
      `--gateway-listen=unix:${path.join(runDir, "gateway.sock")}`,
    ];
    const cli = (method: string, params: unknown) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          [supervisorCli, method, JSON.stringify(params), ...flags],
          (error, stdout, stderr) => (error ? reject(new Error(stdout + stderr)) : resolve(stdout)),
        ),
      );
    const transport = unixSocketTransport(path.join(runDir, "supervisor.sock"));
    const desktop = createSupervisedDesktop(transport);
    const screens = createSupervisedScreens(transport, async () => ({
      transport: "unix",
      socketPath: path.join(runDir, "gateway.sock"),
    }));
    // The fake provider's machines, with this host's daemon as their desktops and gateway.
    const fake = createFakeProvider({ rootDir: path.join(root, "fake") });
    const provider: SandboxProvider = {
      ...fake,
      capabilities: { ...fake.capabilities, desktop: true },
      sandbox: (ref): Sandbox => ({ ...fake.sandbox(ref), desktop, screens }),
    };

    let system: ScreenSystem;
    let browser: Browser;
    let tenant: Awaited<ReturnType<ScreenSystem["tenant"]>>;
    let computerId: string;

    const screenUrl = async (policy: "view" | "control") => {
      const res = await system.rpc(
        "computer/screenUrl",
        { computerId, botId: tenant.botId, policy },
        tenant.token,
      );
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json.result as {
        url: string;
        capabilityId: string;
        slot: { index: number; generation: number };
      };
    };
    const capabilityOf = (url: string) => /\/screens\/([^/]+)\//.exec(url)?.[1] as string;
    const wsUrl = (url: string) => `${url.replace(/^http/, "ws")}websockify`;
    const rejections = (reason: string) =>
      system.logLines.filter(
        (l) => l.includes('"screen.proxy.target_rejected"') && l.includes(`"screen.reason":"${reason}"`),
      );
    const openWs = (url: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.once("open", () => resolve(ws));
        ws.once("unexpected-response", (_q, res) =>
          reject(Object.assign(new Error("refused"), { status: res.statusCode })),
        );
        ws.once("error", reject);
      });

    /** Opens the embed page; resolves once the reporter said `connected`. */
    const openScreen = (url: string) => openScreenIn(browser, url, { timeoutMs: 20_000 });

    beforeAll(async () => {
      await cli("health", {});
      system = await startScreenSystem({ provider });
      tenant = await system.tenant("ada");
      computerId = await system.runningComputer(tenant.spaceId, tenant.token);
      browser = await chromium.launch(CHROMIUM);
      // The bot's desktop shows a green page with a focused text field.
      await desktop.act(tenant.botId, [
        { type: "key", keys: "ctrl+l" },
        { type: "type", text: GREEN_PAGE },
        { type: "key", keys: "Return" },
        { type: "wait", ms: 1500 },
      ]);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await system?.close();
      try {
        process.kill(Number(readFileSync(path.join(runDir, "supervisor.pid"), "utf8")), "SIGTERM");
      } catch {
        // not running
      }
      await new Promise((r) => setTimeout(r, 1500));
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    it("noVNC reports connected and shows the desktop's pixels through proxy and gateway", async () => {
      const { url } = await screenUrl("view");
      const { page, frame } = await openScreen(url);
      expect(await greenPixel(frame, 15_000)).toEqual([18, 171, 52, 255]);
      const headers = (await page.request.get(url)).headers();
      expect(headers["cache-control"]).toContain("no-transform");
      await page.close();
    });

    it("the frame's sandbox holds: opaque origin, no reach into the embedding page", async () => {
      const { page, frame } = await openScreen((await screenUrl("view")).url);
      expect(await page.$eval("iframe", (f) => f.getAttribute("sandbox"))).toBe("allow-scripts");
      const reach = await frame.evaluate(() => {
        const w = globalThis as any;
        let parentDom: string;
        try {
          w.parent.document.querySelector("iframe").removeAttribute("sandbox");
          parentDom = "reached";
        } catch (error) {
          parentDom = (error as Error).name;
        }
        return { origin: w.origin, frameElement: w.frameElement, parentDom };
      });
      expect(reach).toEqual({ origin: "null", frameElement: null, parentDom: "SecurityError" });
      expect(await page.$eval("iframe", (f) => f.getAttribute("sandbox"))).toBe("allow-scripts");
      await page.close();
    });

    it("screenUrl takes a capped lifetime, returns the embed URL, and is recorded without it (TOOL-4)", async () => {
      const ask = (ttlSeconds: number) =>
        system.rpc(
          "computer/screenUrl",
          { computerId, botId: tenant.botId, policy: "view", ttlSeconds },
          tenant.token,
        );
      const before = Date.now();
      const res = await ask(60);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const { url, embedUrl, expiresAt } = res.json.result;
      expect(embedUrl).toBe(url.replace("/screens/", "/embed/"));
      expect(Date.parse(expiresAt) - before).toBeGreaterThan(55_000);
      expect(Date.parse(expiresAt) - before).toBeLessThanOrEqual(61_000);
      const { page } = await openScreen(embedUrl);
      await page.close();
      const tooLong = await ask(86_401);
      expect(tooLong.status).toBe(400);
      expect(tooLong.json.error).toMatchObject({ code: "INVALID_INPUT", details: { maxTtlSeconds: 86_400 } });
      const activity = await system.rpc("computer/activity", { computerId }, tenant.token);
      const minted = activity.json.result.events.filter(
        (e: { payload: { tool: string } }) => e.payload.tool === "computer/screenUrl",
      );
      expect(minted.at(-1)?.payload).toMatchObject({ ok: false, line: "screen_url view" });
      expect(minted.filter((e: { payload: { ok: boolean } }) => e.payload.ok).length).toBeGreaterThan(0);
      expect(JSON.stringify(activity.json)).not.toContain(capabilityOf(url));
    });

    it("view: keys typed in the viewer do not reach the desktop, even with the viewer's view-only turned off", async () => {
      const before = (await desktop.observe(tenant.botId)).frameHash;
      const viewer = await openScreen((await screenUrl("view")).url);
      // A viewer that cheats (its own view-only off): the gateway still drops its input.
      await typeIntoScreen(viewer, "hello", true);
      expect((await desktop.observe(tenant.botId)).frameHash).toBe(before);
      await viewer.page.close();
    });

    it("control needs the control lease; with it, typed keys reach the desktop", async () => {
      const refused = await system.rpc(
        "computer/screenUrl",
        { computerId, botId: tenant.botId, policy: "control" },
        tenant.token,
      );
      expect(refused.json.error?.code).toBe("NOT_IN_CONTROL");
      expect(
        (await system.rpc("computer/takeControl", { computerId, botId: tenant.botId }, tenant.token)).status,
      ).toBe(200);
      const before = (await desktop.observe(tenant.botId)).frameHash;
      const controller = await openScreen((await screenUrl("control")).url);
      const { page } = controller;
      await typeIntoScreen(controller, "hello");
      expect((await desktop.observe(tenant.botId)).frameHash).not.toBe(before);
      // Releasing control revokes the control capability: its live connection closes.
      const closed = new Promise<boolean>((resolve) =>
        page.waitForSelector("html.screen-disconnected", { timeout: 10_000 }).then(
          () => resolve(true),
          () => resolve(false),
        ),
      );
      expect(
        (await system.rpc("computer/releaseControl", { computerId, botId: tenant.botId }, tenant.token))
          .status,
      ).toBe(200);
      expect(await closed).toBe(true);
      await page.close();
    });

    it("rejects a path that is not a session path without asking the API (invalid_path)", async () => {
      const res = await fetch(`${system.web.url}/screens/not-a-capability/`);
      expect(res.status).toBe(404);
      await expect(
        openWs(`${system.web.url.replace("http", "ws")}/screens/x/websockify`),
      ).rejects.toMatchObject({ status: 404 });
      expect(rejections("invalid_path").length).toBeGreaterThanOrEqual(2);
    });

    it("rejects a forged or tampered capability (authority_rejected)", async () => {
      const { url } = await screenUrl("view");
      const cap = capabilityOf(url);
      const tampered = `${cap.slice(0, -5)}${cap.at(-5) === "A" ? "B" : "A"}${cap.slice(-4)}`;
      const res = await fetch(url.replace(cap, tampered));
      expect(res.status).toBe(403);
      await expect(openWs(wsUrl(url.replace(cap, tampered)))).rejects.toMatchObject({ status: 403 });
      expect(
        rejections("authority_rejected").some((l) => l.includes('"screen.authority_reason":"forged"')),
      ).toBe(true);
    });

    it("rejects an expired capability (authority_rejected)", async () => {
      const slot = (await screenUrl("view")).slot;
      const { token } = mintScreenCapability(system.keyring, {
        computerId,
        botId: tenant.botId,
        slot: slot.index,
        generation: slot.generation,
        policy: "view",
        subject: tenant.userId,
        now: Date.now() - 120_000,
        ttlMs: 60_000,
      });
      await expect(
        openWs(`${system.web.url.replace("http", "ws")}/screens/${token}/websockify`),
      ).rejects.toMatchObject({ status: 403 });
      expect(
        rejections("authority_rejected").some((l) => l.includes('"screen.authority_reason":"expired"')),
      ).toBe(true);
    });

    it("revocation closes the live connection and refuses the capability afterwards", async () => {
      const { url, capabilityId } = await screenUrl("view");
      const ws = await openWs(wsUrl(url));
      const code = new Promise<number>((resolve) => ws.once("close", (c) => resolve(c)));
      const revoked = await system.rpc(
        "computer/revokeScreenUrl",
        { computerId, capabilityId },
        tenant.token,
      );
      expect(revoked.json.result).toEqual({ closed: 1 });
      expect(await code).toBe(4001);
      await expect(openWs(wsUrl(url))).rejects.toMatchObject({ status: 403 });
      expect(
        rejections("authority_rejected").some((l) => l.includes('"screen.authority_reason":"revoked"')),
      ).toBe(true);
      const closedLine = system.logLines.find(
        (l) => l.includes('"screen.proxy.websocket_closed"') && l.includes('"screen.closed_by":"revoked"'),
      );
      expect(closedLine).toBeDefined();
      expect(closedLine).toContain('"screen.upstream_handshake":true');
      expect(system.logLines.some((l) => l.includes('"screen.proxy.revoked"'))).toBe(true);
    });

    it("a ticket for another computer is refused by the gateway", async () => {
      // An authority that (wrongly) points another computer's ticket at this gateway.
      const { slot } = await screenUrl("view");
      const other = {
        computerId: "cmp_someoneelse000000000",
        botId: tenant.botId,
        slot: slot.index,
        generation: slot.generation,
      };
      const { gatewayTicket } = await import("@rakazo/screens");
      const ticket = gatewayTicket(system.keyring, {
        ...other,
        id: "x".repeat(22),
        policy: "view",
        subject: "",
        issuedAt: Date.now(),
        expiresAt: Date.now() + 60_000,
      });
      expect(await screens.check(ticket)).toEqual({ ok: false, reason: "forged" });
    });

    it("after the slot is reused, the old capability is refused and its connection was closed", async () => {
      const { url, slot } = await screenUrl("view");
      const ws = await openWs(wsUrl(url));
      const code = new Promise<number>((resolve) => ws.once("close", (c) => resolve(c)));
      await desktop.release(tenant.botId);
      expect(await code).toBe(4002);
      const next = await screenUrl("view");
      expect(next.slot.generation).toBeGreaterThan(slot.generation);
      await expect(openWs(wsUrl(url))).rejects.toMatchObject({ status: 403 });
      expect(
        rejections("authority_rejected").some((l) => l.includes('"screen.authority_reason":"slot_gone"')),
      ).toBe(true);
      (await openWs(wsUrl(next.url))).close();
    });

    it("names authority_unavailable and invalid_authority_response", async () => {
      const { url } = await screenUrl("view");
      const cap = capabilityOf(url);
      const down = createAuthorityClient({
        apiUrl: "http://127.0.0.1:9",
        serviceToken: system.serviceToken,
        timeoutMs: 1000,
      });
      expect(await down.authorize(cap)).toMatchObject({ ok: false, reason: "authority_unavailable" });
      const { createServer } = await import("node:http");
      const liar = createServer((_q, res) =>
        res.end(JSON.stringify({ result: { target: { transport: "ftp" }, ticket: "x" } })),
      );
      await new Promise<void>((r) => liar.listen(0, "127.0.0.1", r));
      const port = (liar.address() as { port: number }).port;
      const bad = createAuthorityClient({ apiUrl: `http://127.0.0.1:${port}`, serviceToken: "t" });
      expect(await bad.authorize(cap)).toMatchObject({ ok: false, reason: "invalid_authority_response" });
      liar.close();
      // The API refuses the authority endpoint without the service token.
      const noToken = await fetch(`${system.apiUrl}/internal/screens/authorize`, {
        method: "POST",
        body: JSON.stringify({ capability: cap }),
      });
      expect(noToken.status).toBe(401);
    });

    it("no log line holds a capability, ticket, token, cookie, header or socket path", async () => {
      const lines = system.logLines.join("\n");
      expect(lines).toContain("screen.proxy.websocket_upgraded");
      expect(lines).not.toMatch(/rs1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}/);
      expect(lines).not.toContain(system.serviceToken);
      expect(lines).not.toContain(tenant.token);
      expect(lines).not.toContain("gateway.sock");
      expect(lines).not.toContain(runDir);
      expect(lines).not.toMatch(/cookie|x-rakazo-screen-ticket|authorization|user-agent/i);
    });
  },
);
