/**
 * A Boat computer's screen in real Chromium (SCR-4): the real API (screen authority)
 * and web service over HTTP, a computer provisioned by the Boat adapter on the Boat emulator
 * (a real `--network none` container of the computer image, reached only through the emulator's
 * protected hostPort listener, whose `_token` the API hands to the web proxy). The noVNC page
 * and its websocket go browser → web proxy → hostPort → the supervisor's gateway → x11vnc.
 * What must hold: the hostPort token never reaches anything the browser sees (URLs, headers,
 * page bodies, websocket URLs and frames) nor a log line; a viewer's keys — even with its own
 * view-only turned off — do not reach the desktop (its frame hash is unchanged), a controller's
 * do (so the view check can tell).
 *
 * Skipped locally without an engine, the image or Chromium; under CI=true that fails instead.
 */

import { computers } from "@rakazo/db";
import { type BoatEmulator, createMachinePool, startBoatEmulator } from "@rakazo/emulators";
import { decodeTerminalFrame, terminalData } from "@rakazo/protocol/terminal";
import { createBoatProvider } from "@rakazo/sandbox/boat";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { eq } from "drizzle-orm";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { greenPixel, openScreen, typeIntoScreen } from "./testing/screen-browser.ts";
import { CHROMIUM, GREEN_PAGE, type ScreenSystem, startScreenSystem } from "./testing/screen-system.ts";

const gate = await requireDocker("a Boat computer's screen in Chromium", [CHROMIUM.executablePath]);
const API_KEY = `boat_${crypto.randomUUID().replaceAll("-", "")}`;

/** Everything a page lets its scripts and its user see: URLs, headers, bodies, websockets. */
function watchPage(page: Page): () => Promise<string> {
  const seen: string[] = [];
  const pending: Promise<unknown>[] = [];
  page.on("request", (request) => seen.push(request.url(), JSON.stringify(request.headers())));
  page.on("response", (response) => seen.push(JSON.stringify(response.headers())));
  // Bodies of finished requests only: the websocket's upgrade response has none to wait for.
  page.on("requestfinished", (request) => {
    pending.push(
      request
        .response()
        .then((response) => response?.text())
        .then(
          (body) => seen.push(body ?? ""),
          () => undefined,
        ),
    );
  });
  page.on("websocket", (ws) => {
    seen.push(ws.url());
    const frame = ({ payload }: { payload: string | Buffer }) =>
      seen.push(typeof payload === "string" ? payload : payload.toString("latin1"));
    ws.on("framesent", frame);
    ws.on("framereceived", frame);
  });
  return async () => {
    await Promise.all(pending);
    for (const frame of page.frames()) seen.push(frame.url(), await frame.content().catch(() => ""));
    return seen.join("\n");
  };
}

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({ image: COMPUTER_IMAGE, emulator: "boat", owner: "i15-boat-screen" });
  let boat: ReturnType<typeof createBoatProvider>;
  let emulator: BoatEmulator;
  let system: ScreenSystem;
  let browser: Browser;
  let tenant: Awaited<ReturnType<ScreenSystem["tenant"]>>;
  let computerId: string;
  let ref: string;

  const screenUrl = async (policy: "view" | "control") => {
    const res = await system.rpc(
      "computer/screenUrl",
      { computerId, botId: tenant.botId, policy },
      tenant.token,
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return { url: res.json.result.url as string, answer: JSON.stringify(res.json) };
  };

  beforeAll(async () => {
    emulator = await startBoatEmulator({ machines, apiKey: API_KEY });
    const bundle = await bundleSupervisor();
    boat = createBoatProvider({
      apiKey: API_KEY,
      apiUrl: emulator.url,
      supervisorBundle: async () => new Uint8Array(Buffer.from(bundle.text)),
    });
    system = await startScreenSystem({ provider: boat });
    tenant = await system.tenant("boat");
    computerId = await system.runningComputer(tenant.spaceId, tenant.token);
    const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
    if (!row?.providerRef) throw new Error(`computer ${computerId} has no providerRef`);
    ref = row.providerRef;
    browser = await chromium.launch(CHROMIUM);
    await boat.sandbox(ref).desktop?.act(tenant.botId, [
      { type: "key", keys: "ctrl+l" },
      { type: "type", text: GREEN_PAGE },
      { type: "key", keys: "Return" },
      { type: "wait", ms: 2000 },
    ]);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await system?.close();
    if (ref) await boat?.destroy(ref).catch(() => undefined);
    await emulator?.close();
    await machines.removeAll();
  }, 120_000);

  it("opens through the web proxy and the protected hostPort; view input is dropped, control input arrives; the port token stays server-side", async () => {
    const desktop = boat.sandbox(ref).desktop;
    const screens = boat.sandbox(ref).screens;
    if (!desktop || !screens) throw new Error("the Boat adapter wires desktops and screens");
    const before = (await desktop.observe(tenant.botId)).frameHash;

    const view = await screenUrl("view");
    let seenByViewer: () => Promise<string> = async () => "";
    // A minute to connect: each hop into the machine is a `docker exec` of socat in the emulator.
    const viewer = await openScreen(browser, view.url, {
      timeoutMs: 60_000,
      onPage: (page) => {
        seenByViewer = watchPage(page);
      },
    });
    expect(await greenPixel(viewer.frame)).toEqual([18, 171, 52, 255]);
    // A viewer that cheats (its own view-only off): the gateway in the machine drops its input.
    await typeIntoScreen(viewer, "hello", true);
    expect((await desktop.observe(tenant.botId)).frameHash).toBe(before);
    const viewerSaw = await seenByViewer();
    await viewer.page.close();

    expect(
      (await system.rpc("computer/takeControl", { computerId, botId: tenant.botId }, tenant.token)).status,
    ).toBe(200);
    const control = await screenUrl("control");
    let seenByController: () => Promise<string> = async () => "";
    const controller = await openScreen(browser, control.url, {
      timeoutMs: 60_000,
      onPage: (page) => {
        seenByController = watchPage(page);
      },
    });
    await typeIntoScreen(controller, "hello");
    expect((await desktop.observe(tenant.botId)).frameHash).not.toBe(before);
    const controllerSaw = await seenByController();
    await controller.page.close();

    // The target the API handed the web proxy is Boat's protected port, token in its query.
    const target = await screens.target();
    if (target.transport !== "http") throw new Error(`expected an http target, got ${target.transport}`);
    const portToken = new URL(target.url).searchParams.get("_token") ?? "";
    expect(portToken.length).toBeGreaterThan(16);
    expect(viewerSaw).toContain("/websockify");
    for (const visible of [viewerSaw, controllerSaw, view.answer, control.answer]) {
      expect(visible).not.toContain(portToken);
      expect(visible).not.toContain(new URL(target.url).host);
      expect(visible).not.toContain(API_KEY);
    }
    const lines = system.logLines.join("\n");
    expect(lines).toContain("screen.proxy.websocket_upgraded");
    expect(lines).not.toContain(portToken);
    expect(lines).not.toContain(API_KEY);
  }, 240_000);

  it("the Shell opens a real shell through the web proxy and the protected hostPort; releasing control closes it within 1 s (TRM-4..6)", async () => {
    const botId = tenant.botId;
    expect((await system.rpc("computer/takeControl", { computerId, botId }, tenant.token)).status).toBe(200);
    const computer = await system.rpc("computer/get", { computerId }, tenant.token);
    expect(computer.json.result.capabilities).toEqual({ terminal: true });
    const minted = await system.rpc("computer/terminalUrl", { computerId, botId }, tenant.token);
    expect(minted.status, JSON.stringify(minted.json)).toBe(200);
    const ws = new WebSocket(minted.json.result.websocketUrl as string, { perMessageDeflate: false });
    let text = "";
    ws.on("message", (data: Buffer) => {
      const frame = decodeTerminalFrame(new Uint8Array(data));
      if (frame.type === "data") text += Buffer.from(frame.data).toString("utf8");
    });
    const closed = new Promise<{ code: number; at: number }>((resolve) =>
      ws.once("close", (code) => resolve({ code, at: Date.now() })),
    );
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    ws.send(terminalData(`printf 'S%s uid=%s cwd=%s\\n' -ok "$(id -u)" "$PWD"\r`));
    const deadline = Date.now() + 30_000;
    const answer = () => /S-ok uid=(\d+) cwd=(\S+)/.exec(text);
    while (!answer() && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    const match = answer();
    expect(match, `shell output: ${JSON.stringify(text.slice(-300))}`).not.toBeNull();
    expect(match?.[1]).not.toBe("0");
    expect(match?.[2]).toMatch(new RegExp(`/bots/${botId}$`));

    const released = Date.now();
    expect((await system.rpc("computer/releaseControl", { computerId, botId }, tenant.token)).status).toBe(
      200,
    );
    const end = await closed;
    expect(end.at - released, "the shell closed within 1 s of the release").toBeLessThan(1_000);

    // The hostPort token stayed server-side: not in the answer, not in a log line.
    const target = await boat.sandbox(ref).screens?.target();
    const portToken =
      target?.transport === "http" ? (new URL(target.url).searchParams.get("_token") ?? "") : "";
    expect(portToken.length).toBeGreaterThan(16);
    expect(JSON.stringify(minted.json)).not.toContain(portToken);
    expect(system.logLines.join("\n")).not.toContain(portToken);
  }, 240_000);
});
