/**
 * Old RFB viewers through a view ticket (SCR-2), against a real desktop: Xvfb + x11vnc on a Unix
 * socket behind the gateway, reached over a loopback TCP ↔ websocket bridge as a viewer like
 * `vncsnapshot` (RFB 3.3, where the server picks the security type) needs. vncsnapshot takes a
 * picture; a raw 3.3 client's pointer and key events are dropped by the gateway and never reach
 * the X server.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { deriveScreenKey, newCapabilityId, sealCapability } from "@rakazo/protocol/capability";
import { requireTools } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { rfbMessages } from "../testing/fake-rfb.ts";
import { ComputerGateway, TICKET_HEADER } from "./computer-gateway.ts";

const gate = requireTools("RFB 3.3 viewers on a view ticket", ["Xvfb", "x11vnc", "xdotool", "vncsnapshot"]);

const COMPUTER = "cmp_rfbviewers00000000";
const key = deriveScreenKey(randomBytes(32), "gateway", COMPUTER);
const WIDTH = 320;
const HEIGHT = 200;

function viewTicket(): string {
  const now = Date.now();
  return sealCapability(key, "k1", "gateway", {
    id: newCapabilityId(),
    computerId: COMPUTER,
    botId: "bot_v",
    slot: 0,
    generation: 1,
    policy: "view",
    subject: "usr_1",
    issuedAt: now,
    expiresAt: now + 60_000,
  });
}

const until = async (check: () => boolean, what: string, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Width and height from a JPEG's start-of-frame marker. */
function jpegSize(jpeg: Buffer): { width: number; height: number } {
  expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  for (let at = 2; at + 9 < jpeg.length; ) {
    const marker = jpeg[at + 1] as number;
    if (marker >= 0xc0 && marker <= 0xc3)
      return { height: jpeg.readUInt16BE(at + 5), width: jpeg.readUInt16BE(at + 7) };
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  throw new Error("no JPEG frame header");
}

describe.skipIf(gate.skip)(gate.title, () => {
  let dir = "";
  let display = 0;
  let gateway: ComputerGateway;
  let bridge: net.Server;
  let port = 0;
  const children: ChildProcess[] = [];

  /** The X pointer's position on the test display. */
  const pointer = (): string => {
    const out = spawnSync("xdotool", ["getmouselocation", "--shell"], {
      env: { ...process.env, DISPLAY: `:${display}` },
      encoding: "utf8",
    });
    return out.stdout
      .split("\n")
      .filter((line) => /^[XY]=/.test(line))
      .join(" ");
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-rfb33-"));
    // Xvfb picks a free display itself (-displayfd): nothing else on the machine is disturbed.
    const xvfb = spawn(
      "Xvfb",
      ["-displayfd", "3", "-screen", "0", `${WIDTH}x${HEIGHT}x24`, "-nolisten", "tcp"],
      {
        stdio: ["ignore", "ignore", "ignore", "pipe"],
      },
    );
    children.push(xvfb);
    display = await new Promise<number>((resolve, reject) => {
      let text = "";
      xvfb.stdio[3]?.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes("\n")) resolve(Number(text.trim()));
      });
      xvfb.once("exit", (code) => reject(new Error(`Xvfb exited ${code}`)));
    });
    const vncSocket = path.join(dir, "slot0-g1.sock");
    const x11vnc = spawn(
      "x11vnc",
      [
        "-display",
        `:${display}`,
        "-unixsock",
        vncSocket,
        "-rfbport",
        "0",
        "-forever",
        "-shared",
        "-nopw",
        "-quiet",
      ],
      { stdio: "ignore" },
    );
    children.push(x11vnc);
    await until(() => existsSync(vncSocket), "x11vnc's socket");

    gateway = new ComputerGateway({
      listen: { path: path.join(dir, "gateway.sock") },
      stateDir: dir,
      slotAt: (index) =>
        index === 0 ? { index: 0, generation: 1, botId: "bot_v", state: "running", vncSocket } : undefined,
    });
    await gateway.start();
    gateway.configure({ computerId: COMPUTER, keys: [{ kid: "k1", key: key.toString("base64") }] });

    // Loopback TCP ↔ the gateway's websocket, with a fresh view ticket per connection.
    bridge = net.createServer((tcp) => {
      const ws = new WebSocket(`ws+unix://${path.join(dir, "gateway.sock")}:/v1/rfb`, {
        headers: { [TICKET_HEADER]: viewTicket() },
      });
      ws.binaryType = "nodebuffer";
      const early: Buffer[] = [];
      tcp.on("data", (chunk: Buffer) =>
        ws.readyState === WebSocket.OPEN ? ws.send(chunk) : early.push(chunk),
      );
      ws.once("open", () => {
        for (const chunk of early.splice(0)) ws.send(chunk);
      });
      ws.on("message", (data: Buffer) => tcp.write(data));
      ws.on("close", () => tcp.end());
      ws.on("error", () => tcp.destroy());
      tcp.on("close", () => ws.close());
      tcp.on("error", () => ws.terminate());
    });
    await new Promise<void>((resolve) => bridge.listen(0, "127.0.0.1", resolve));
    port = (bridge.address() as net.AddressInfo).port;
  }, 30_000);

  afterAll(async () => {
    bridge?.close();
    await gateway?.close();
    for (const child of children.reverse()) child.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("vncsnapshot (RFB 3.3) takes a picture through a view ticket", async () => {
    const out = path.join(dir, "shot.jpg");
    // Not spawnSync: the gateway and the bridge serve it from this very process.
    const child = spawn("vncsnapshot", ["-quiet", `127.0.0.1::${port}`, out], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const status = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    clearTimeout(timer);
    expect(status, output).toBe(0);
    expect(jpegSize(readFileSync(out))).toEqual({ width: WIDTH, height: HEIGHT });
  }, 30_000);

  it("a raw RFB 3.3 client's pointer and key events never reach the desktop", async () => {
    const before = pointer();
    expect(before).toMatch(/^X=\d+ Y=\d+$/);
    const tcp = net.connect(port, "127.0.0.1");
    let inbound = Buffer.alloc(0);
    tcp.on("data", (chunk: Buffer) => {
      inbound = Buffer.concat([inbound, chunk]);
    });
    try {
      await until(() => inbound.length >= 12, "the server's version");
      expect(inbound.subarray(0, 4).toString()).toBe("RFB ");
      tcp.write("RFB 003.003\n");
      await until(() => inbound.length >= 16, "the server's security type");
      expect(inbound.readUInt32BE(12)).toBe(1); // None, chosen by the server
      tcp.write(Buffer.from([0])); // ClientInit
      await until(() => inbound.length >= 16 + 24, "ServerInit");
      expect([inbound.readUInt16BE(16), inbound.readUInt16BE(18)]).toEqual([WIDTH, HEIGHT]);
      // Move the pointer to a corner and click; type a key. A control ticket would move it.
      const target = { x: 3, y: 5 };
      expect(before).not.toBe(`X=${target.x} Y=${target.y}`);
      tcp.write(
        Buffer.concat([
          rfbMessages.pointerEvent(0, target.x, target.y),
          rfbMessages.pointerEvent(1, target.x, target.y),
          rfbMessages.pointerEvent(0, target.x, target.y),
          rfbMessages.keyEvent(true, 0x61),
          rfbMessages.keyEvent(false, 0x61),
          rfbMessages.updateRequest(false),
        ]),
      );
      // The update request passes: the desktop answers it, so everything before it was handled.
      const handshake = inbound.length;
      await until(() => inbound.length > handshake, "a framebuffer update");
      await new Promise((r) => setTimeout(r, 300));
      // The X server's own pointer, then the gateway's count (3 pointer + 2 key events).
      expect(pointer()).toBe(before);
      expect(gateway.connections()[0]?.droppedInput).toBe(5);
      expect(tcp.destroyed).toBe(false);
    } finally {
      tcp.destroy();
    }
  }, 30_000);
});
