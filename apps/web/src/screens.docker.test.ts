/**
 * A real Docker computer's screen in real Chromium: noVNC page from the web service, websocket
 * through the proxy to the computer's gateway (`<run dir>/gateway.sock`, bind-mounted), to the
 * bot's x11vnc. The authority here is in-process (mint → gateway ticket → the sandbox's gateway
 * target); the API's authority endpoint is covered by screens.integration.test.ts.
 *
 * Skipped locally (fails under CI=true) when there is no Docker engine or no computer image (CI runs scripts/docker-engine.sh
 * and infra/sandboxes/image/build.sh first; rebuild the image after changing the supervisor).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@rakazo/log";
import {
  createSupervisedDesktop,
  createSupervisedScreens,
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
} from "@rakazo/screens";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScreenAuthority } from "./authority.ts";
import { startWebServer, type WebServer } from "./server.ts";
import { greenPixel, openScreen, typeIntoScreen } from "./testing/screen-browser.ts";
import { CHROMIUM, GREEN_PAGE } from "./testing/screen-system.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
// Skipped locally without an engine, the image or host Chromium; under CI=true that fails instead.
const ready = !(await requireDocker("a Docker computer's screen in Chromium", [CHROMIUM.executablePath]))
  .skip;

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

describe.skipIf(!ready)(
  ready
    ? "a Docker computer's screen in Chromium"
    : `screens on Docker — skipped: no engine or no image ${IMAGE}`,
  () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "rkz-web-docker-"));
    const keyring = parseScreenKeys(generateScreenKeys("k1"));
    const computerId = `cmp_webdocker${Date.now().toString(36)}`;
    const botId = "bot_webdocker0000000000";
    const logLines: string[] = [];
    let provider: SandboxProvider;
    let ref: string;
    let web: WebServer;
    let browser: Browser;

    const sandbox = () => provider.sandbox(ref);
    const url = (policy: "view" | "control", slot: { index: number; generation: number }) =>
      `${web.url}/screens/${mintScreenCapability(keyring, { computerId, botId, slot: slot.index, generation: slot.generation, policy, subject: "usr_t" }).token}/`;

    beforeAll(async () => {
      provider = createDockerProvider({
        image: IMAGE,
        dataDir,
        labelPrefix: "rakazo-webtest",
        desktop: (context) => createSupervisedDesktop(transportOf(context)),
        screens: (context) =>
          createSupervisedScreens(transportOf(context), async () => ({
            transport: "unix",
            socketPath: path.join(await context.hostRuntimeDir(), "gateway.sock"),
          })),
      });
      ref = (await provider.provision({ computerId, mode: "team", homeKey: `home-${Date.now()}` })).ref;
      const authority: ScreenAuthority = {
        async authorize(capability) {
          const opened = openScreenCapability(keyring, capability);
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
      await desktop.act(botId, [
        { type: "key", keys: "ctrl+l" },
        { type: "type", text: GREEN_PAGE },
        { type: "key", keys: "Return" },
        { type: "wait", ms: 2000 },
      ]);
      await sandbox().screens?.configure(gatewayKeysFor(keyring, computerId));
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      await web?.close();
      if (ref) await provider.destroy(ref);
      rmSync(dataDir, { recursive: true, force: true });
    }, 60_000);

    it("shows the computer's desktop pixels; view input is dropped, control input arrives", async () => {
      const desktop = sandbox().desktop;
      if (!desktop) throw new Error("no desktop");
      const first = await desktop.observe(botId);
      const view = await openScreen(browser, url("view", first.slot));
      expect(await greenPixel(view.frame)).toEqual([18, 171, 52, 255]);

      await typeIntoScreen(view, "hello", true);
      expect((await desktop.observe(botId)).frameHash).toBe(first.frameHash);
      await view.page.close();

      const control = await openScreen(browser, url("control", first.slot));
      await typeIntoScreen(control, "hello");
      expect((await desktop.observe(botId)).frameHash).not.toBe(first.frameHash);
      await control.page.close();

      const lines = logLines.join("\n");
      expect(lines).toContain("screen.proxy.websocket_upgraded");
      expect(lines).not.toMatch(/rs1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}/);
      expect(lines).not.toContain(dataDir);
    });
  },
);
