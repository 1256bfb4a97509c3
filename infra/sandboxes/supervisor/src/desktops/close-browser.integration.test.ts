/**
 * `DesktopSlots.closeBrowser` on a real desktop (Xvfb + Chromium + x11vnc, processLauncher): a
 * run-end checkpoint closes only the browser so its profile is complete on disk (PER-7) while
 * the bot's screen stays (CMP-6). An RFB viewer connected to the slot's x11vnc before the close
 * stays connected through it, the display stays served, and the next observe brings Chromium
 * back on the same slot and generation; the viewer then sees the browser's window drawn.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { afterAll, describe, expect, it } from "vitest";
import { DesktopSlots } from "./desktop-slots.ts";
import { processLauncher } from "./desktop-stack.ts";

const missing = missingOrFail("closing a desktop's browser", ["Xvfb", "x11vnc", "xdotool", "chromium"]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** Whether Chromium's DevTools answers on `port` (the browser is up). */
async function devtoolsUp(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/json/version`, { signal: AbortSignal.timeout(1000) }).then(
    (response) => response.ok,
    () => false,
  );
}

function chromiumWindows(display: number): Promise<string> {
  return new Promise((resolve) =>
    execFile(
      "xdotool",
      ["search", "--onlyvisible", "--class", "chromium"],
      { env: { ...process.env, DISPLAY: `:${display}` } },
      (_error, stdout) => resolve(stdout.trim()),
    ),
  );
}

/**
 * A shared RFB 3.8 viewer on the slot's x11vnc socket, security None, raw encoding only; it
 * counts the bytes of framebuffer updates it receives (the updates are not parsed further:
 * any byte after the handshake is server-to-client traffic of the screen).
 */
async function openViewer(socketPath: string) {
  const socket = net.connect(socketPath);
  const state = { closed: false, afterHandshake: 0 };
  socket.on("close", () => {
    state.closed = true;
  });
  socket.on("error", () => undefined);
  let buffered = Buffer.alloc(0);
  let handshakeDone = false;
  const need = async (n: number): Promise<Buffer> => {
    await until(`${n} bytes from x11vnc`, () => buffered.length >= n || state.closed, 10_000);
    if (buffered.length < n) throw new Error("x11vnc closed the connection during the handshake");
    const out = buffered.subarray(0, n);
    buffered = buffered.subarray(n);
    return out;
  };
  socket.on("data", (chunk: Buffer) => {
    if (handshakeDone) state.afterHandshake += chunk.length;
    else buffered = Buffer.concat([buffered, chunk]);
  });
  expect((await need(12)).toString("latin1")).toMatch(/^RFB 003\./);
  socket.write("RFB 003.008\n");
  const types = await need((await need(1))[0] as number);
  expect([...types]).toContain(1);
  socket.write(Buffer.from([1]));
  expect((await need(4)).readUInt32BE(0)).toBe(0);
  socket.write(Buffer.from([1])); // ClientInit: shared
  const init = await need(24);
  const [width, height] = [init.readUInt16BE(0), init.readUInt16BE(2)];
  await need(init.readUInt32BE(20));
  handshakeDone = true;
  // SetEncodings: raw only.
  socket.write(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0]));
  const request = (incremental: boolean) => {
    const m = Buffer.alloc(10);
    m[0] = 3;
    m[1] = incremental ? 1 : 0;
    m.writeUInt16BE(width, 6);
    m.writeUInt16BE(height, 8);
    socket.write(m);
  };
  return { state, request, close: () => socket.destroy() };
}

describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `closing a desktop's browser — skipped, missing: ${missing.join(", ")}`
    : "closing a desktop's browser",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rakazo-close-browser-"));
    // Displays 1200–1239 are a range no other host suite uses.
    const displayBase = 1200 + Math.floor(Math.random() * 40);
    const slots = new DesktopSlots({
      launcher: processLauncher({
        chromiumConfigDir: path.join(root, "chromium-config"),
        logDir: path.join(root, "logs"),
      }),
      workspace: path.join(root, "home"),
      layout: { runDir: path.join(root, "run"), displayBase, debugPortBase: 23_000 + displayBase },
      screenLimit: 0,
    });
    afterAll(async () => {
      await slots.shutdown();
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    it("keeps the display, x11vnc and a connected viewer; the next observe brings Chromium back", async () => {
      const before = await slots.observe("bot_close");
      const [info] = slots.list();
      if (!info) throw new Error("no slot");
      expect(await devtoolsUp(info.debugPort)).toBe(true);
      await slots.openScreen("bot_close");
      const viewer = await openViewer(info.vncSocket);
      viewer.request(false);
      await until("the first full frame", () => viewer.state.afterHandshake > 0);

      const closing = performance.now();
      expect(await slots.closeBrowser("bot_close")).toEqual({ closed: true });
      const closeMs = Math.round(performance.now() - closing);
      // The browser is gone; the display and its screen server are not.
      expect(await devtoolsUp(info.debugPort)).toBe(false);
      expect(await chromiumWindows(info.display)).toBe("");
      expect(existsSync(`/tmp/.X11-unix/X${info.display}`)).toBe(true);
      expect(existsSync(info.vncSocket)).toBe(true);
      expect(slots.list()).toEqual([expect.objectContaining({ state: "running", slot: before.slot })]);
      // A second close has nothing to close.
      expect(await slots.closeBrowser("bot_close")).toEqual({ closed: false });
      expect(await slots.closeBrowser("bot_nobody")).toEqual({ closed: false });

      // The viewer's connection is the one it opened before the close, and still served.
      await sleep(500);
      expect(viewer.state.closed).toBe(false);
      const received = viewer.state.afterHandshake;
      viewer.request(true);

      const relaunching = performance.now();
      const after = await slots.observe("bot_close");
      const relaunchMs = Math.round(performance.now() - relaunching);
      expect(after.slot).toEqual(before.slot);
      expect(await devtoolsUp(info.debugPort)).toBe(true);
      expect(await chromiumWindows(info.display)).toMatch(/^\d+/);
      // Chromium's window being drawn is a framebuffer update on the same connection.
      await until("a frame update after the relaunch", () => viewer.state.afterHandshake > received);
      expect(viewer.state.closed).toBe(false);
      viewer.close();
      process.stdout.write(`closeBrowser ${closeMs} ms, relaunch on observe ${relaunchMs} ms\n`);
    }, 120_000);
  },
);
