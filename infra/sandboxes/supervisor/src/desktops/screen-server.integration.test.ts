/**
 * x11vnc starts on a desktop's first viewer (screen-server.ts), against real desktops: Xvfb,
 * Chromium and x11vnc started by `processLauncher` under `DesktopSlots`, viewers through the
 * real `ComputerGateway` doing an RFB handshake. x11vnc is a stand-in script that records each
 * start and then runs the real x11vnc, or fails, or starts slowly, as the test asks.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { deriveScreenKey, newCapabilityId, sealCapability } from "@rakazo/protocol/capability";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ComputerGateway, TICKET_HEADER } from "../gateway/computer-gateway.ts";
import { CLIENT_HANDSHAKE, rfbMessages } from "../testing/fake-rfb.ts";
import { DesktopSlots } from "./desktop-slots.ts";
import { processLauncher } from "./desktop-stack.ts";

const missing = missingOrFail("x11vnc on a desktop's first viewer", [
  "Xvfb",
  "x11vnc",
  "xdotool",
  "chromium",
]);

const COMPUTER = "cmp_firstviewer0000000";
const key = deriveScreenKey(randomBytes(32), "gateway", COMPUTER);

/** Records `$$` (its process group: spawned as a leader) per start, then acts on the mode file. */
const STAND_IN = (dir: string) => `#!/bin/sh
echo $$ >> "${dir}/starts"
case "$(cat "${dir}/mode" 2>/dev/null)" in
  fail) exit 1 ;;
  slow) sleep 3 ;;
esac
exec x11vnc "$@"
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Live processes whose command line holds `text`, or (a number) whose process group is that. */
function processes(match: string | number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z") continue;
      const hit =
        typeof match === "number"
          ? Number(fields[2]) === match
          : readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(match);
      if (hit) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

interface Viewer {
  /** Resolves with the ms from dialling to the websocket being open; rejects with the refusal. */
  readonly opened: Promise<number>;
  /** Resolves once the RFB handshake is done and a framebuffer update arrived: the screen's size. */
  readonly pixels: () => Promise<{ width: number; height: number }>;
  close(): void;
}

/** A viewer through the gateway: 3.8 handshake, security None, one full update request. */
function viewer(gatewaySocket: string, slot: { index: number; generation: number }, botId: string): Viewer {
  const now = Date.now();
  const ticket = sealCapability(key, "k1", "gateway", {
    id: newCapabilityId(),
    computerId: COMPUTER,
    botId,
    slot: slot.index,
    generation: slot.generation,
    policy: "view",
    subject: "usr_1",
    issuedAt: now,
    expiresAt: now + 60_000,
  });
  const started = performance.now();
  const ws = new WebSocket(`ws+unix://${gatewaySocket}:/v1/rfb`, { headers: { [TICKET_HEADER]: ticket } });
  ws.binaryType = "nodebuffer";
  let inbound = Buffer.alloc(0);
  ws.on("message", (data: Buffer) => {
    inbound = Buffer.concat([inbound, data]);
  });
  const opened = new Promise<number>((resolve, reject) => {
    ws.once("open", () => resolve(performance.now() - started));
    ws.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk));
      response.on("end", () => reject(new Error(`${response.statusCode} ${body}`)));
    });
    ws.once("error", reject);
  });
  const until = async (what: string, check: () => boolean): Promise<void> => {
    for (const deadline = Date.now() + 15_000; !check(); await sleep(20)) {
      if (Date.now() > deadline) throw new Error(`${what}: not in 15 s (${inbound.length} bytes)`);
    }
  };
  return {
    opened,
    async pixels() {
      await opened;
      await until("the server's version", () => inbound.length >= 12);
      expect(inbound.subarray(0, 12).toString()).toMatch(/^RFB 003\.00\d\n$/);
      ws.send(CLIENT_HANDSHAKE);
      const types = () => inbound[12] ?? 0;
      const init = () => 12 + 1 + types() + 4;
      await until("ServerInit", () => inbound.length >= 13 && inbound.length >= init() + 24);
      const size = { width: inbound.readUInt16BE(init()), height: inbound.readUInt16BE(init() + 2) };
      const updateAt = init() + 24 + inbound.readUInt32BE(init() + 20);
      ws.send(rfbMessages.updateRequest(false));
      await until("a framebuffer update", () => inbound.length > updateAt);
      expect(inbound[updateAt]).toBe(0); // FramebufferUpdate
      return size;
    },
    close: () => ws.terminate(),
  };
}

describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `x11vnc on a desktop's first viewer — skipped, missing: ${missing.join(", ")}`
    : "x11vnc on a desktop's first viewer",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rakazo-first-viewer-"));
    const gatewaySocket = path.join(root, "gateway.sock");
    // Displays 1240–1279 are a range no other host suite uses.
    const displayBase = 1240 + Math.floor(Math.random() * 30);
    const standIn = path.join(root, "x11vnc-stand-in");
    const setMode = (mode: "run" | "fail" | "slow") => writeFileSync(path.join(root, "mode"), mode);
    const starts = (): number[] => {
      const file = path.join(root, "starts");
      return existsSync(file)
        ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map(Number)
        : [];
    };
    let slots: DesktopSlots;
    let gateway: ComputerGateway;

    beforeAll(async () => {
      writeFileSync(standIn, STAND_IN(root));
      chmodSync(standIn, 0o755);
      setMode("run");
      slots = new DesktopSlots({
        launcher: processLauncher({
          x11vncBinary: standIn,
          chromiumConfigDir: path.join(root, "chromium-config"),
          logDir: path.join(root, "logs"),
        }),
        workspace: path.join(root, "home"),
        layout: { runDir: path.join(root, "run"), displayBase, debugPortBase: 24_000 + displayBase },
        screenLimit: 0,
      });
      gateway = new ComputerGateway({
        listen: { path: gatewaySocket },
        stateDir: root,
        slotAt: (index) => slots.slotAt(index),
        serveRfb: (index, generation) => slots.serveScreen(index, generation),
      });
      slots.onSlotClosing((index, generation) => gateway.closeSlot(index, generation));
      await gateway.start();
      gateway.configure({ computerId: COMPUTER, keys: [{ kid: "k1", key: key.toString("base64") }] });
    }, 30_000);

    afterAll(async () => {
      await slots?.shutdown();
      await gateway?.close();
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    const socketOf = (botId: string): string => {
      const info = slots.list().find((slot) => slot.botId === botId);
      if (!info) throw new Error(`${botId} has no desktop`);
      return info.vncSocket;
    };

    it("starts a desktop without x11vnc; its first viewer starts it and gets pixels, and it stays", async () => {
      const { slot } = await slots.observe("bot_first");
      const socket = socketOf("bot_first");
      expect(processes(socket)).toEqual([]);
      expect(existsSync(socket)).toBe(false);
      expect(starts()).toEqual([]);

      const first = viewer(gatewaySocket, slot, "bot_first");
      const firstMs = await first.opened;
      expect(await first.pixels()).toEqual({ width: 1280, height: 800 });
      expect(processes(socket)).toHaveLength(1);
      expect(existsSync(socket)).toBe(true);

      // A later viewer finds it serving; one that leaves does not stop it.
      first.close();
      const second = viewer(gatewaySocket, slot, "bot_first");
      const secondMs = await second.opened;
      expect(await second.pixels()).toEqual({ width: 1280, height: 800 });
      second.close();
      await sleep(300);
      expect(starts()).toHaveLength(1);
      expect(processes(socket)).toHaveLength(1);
      process.stdout.write(
        `first viewer's connect ${firstMs.toFixed(0)} ms (x11vnc started), a later one ${secondMs.toFixed(0)} ms\n`,
      );

      await slots.release("bot_first");
      expect(processes(socket)).toEqual([]);
      expect(existsSync(socket)).toBe(false);
    }, 120_000);

    it("starts one x11vnc for viewers that arrive at once", async () => {
      const { slot } = await slots.observe("bot_pair");
      const socket = socketOf("bot_pair");
      const before = starts().length;
      const pair = [viewer(gatewaySocket, slot, "bot_pair"), viewer(gatewaySocket, slot, "bot_pair")];
      const sizes = await Promise.all(pair.map((one) => one.pixels()));
      expect(sizes).toEqual([
        { width: 1280, height: 800 },
        { width: 1280, height: 800 },
      ]);
      expect(starts().length - before).toBe(1);
      expect(processes(socket)).toHaveLength(1);
      for (const one of pair) one.close();
      await slots.release("bot_pair");
    }, 120_000);

    it("refuses a viewer whose x11vnc did not start (502) and leaves nothing; the next viewer starts it", async () => {
      const { slot } = await slots.observe("bot_fail");
      const socket = socketOf("bot_fail");
      setMode("fail");
      await expect(viewer(gatewaySocket, slot, "bot_fail").opened).rejects.toThrow(
        /^502 .*upstream_unavailable/,
      );
      const failed = starts().at(-1) as number;
      expect(processes(failed)).toEqual([]);
      expect(existsSync(socket)).toBe(false);
      setMode("run");
      const next = viewer(gatewaySocket, slot, "bot_fail");
      expect(await next.pixels()).toEqual({ width: 1280, height: 800 });
      next.close();
      await slots.release("bot_fail");
    }, 120_000);

    it("stopping a desktop while its x11vnc starts leaves no process and no socket", async () => {
      const { slot } = await slots.observe("bot_stop");
      const socket = socketOf("bot_stop");
      const before = starts().length;
      setMode("slow");
      const late = viewer(gatewaySocket, slot, "bot_stop");
      const refused = late.opened.then(
        () => "opened",
        (error: Error) => error.message,
      );
      for (const deadline = Date.now() + 10_000; starts().length === before; await sleep(20)) {
        if (Date.now() > deadline) throw new Error("x11vnc's start never began");
      }
      const starting = starts().at(-1) as number;
      expect(processes(starting).length).toBeGreaterThan(0);
      await expect(slots.release("bot_stop")).resolves.toEqual({ released: true });
      expect(processes(starting)).toEqual([]);
      expect(processes(socket)).toEqual([]);
      expect(existsSync(socket)).toBe(false);
      expect(await refused).toMatch(/^410 .*slot_gone/);
      setMode("run");
    }, 120_000);
  },
);
