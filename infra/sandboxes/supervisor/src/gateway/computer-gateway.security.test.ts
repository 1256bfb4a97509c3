/**
 * The gateway's security properties against a fake RFB server on a Unix socket (SCR-1..3):
 * only valid tickets for this computer and the slot's current generation are bridged; view
 * tickets cannot send input; revocation and slot teardown close live connections.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  deriveScreenKey,
  newCapabilityId,
  type ScreenClaims,
  sealCapability,
} from "@rakazo/protocol/capability";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  CLIENT_HANDSHAKE,
  type FakeRfbServer,
  rfbMessages,
  SERVER_HANDSHAKE_BYTES,
  startFakeRfb,
} from "../testing/fake-rfb.ts";
import { ComputerGateway, type GatewaySlot, TICKET_HEADER } from "./computer-gateway.ts";

const master = randomBytes(32);
const COMPUTER = "cmp_gatewaytest0000000";
const keyOf = (computerId: string) => deriveScreenKey(master, "gateway", computerId);

let dir: string;
let gateway: ComputerGateway;
let rfb: FakeRfbServer;
let slots: Map<number, GatewaySlot>;
const events: Record<string, unknown>[] = [];

function claims(overrides: Partial<ScreenClaims> = {}): ScreenClaims {
  const now = Date.now();
  return {
    id: newCapabilityId(),
    computerId: COMPUTER,
    botId: "bot_a",
    slot: 0,
    generation: 1,
    policy: "control",
    subject: "usr_1",
    issuedAt: now,
    expiresAt: now + 60_000,
    ...overrides,
  };
}

function ticket(c: ScreenClaims, key = keyOf(c.computerId)): string {
  return sealCapability(key, "k1", "gateway", c);
}

function socketPath(): string {
  return path.join(dir, "gateway.sock");
}

/** Opens a websocket through the gateway; resolves with it or rejects with the HTTP status. */
function connect(t: string | undefined): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws+unix://${socketPath()}:/v1/rfb`, {
      headers: t === undefined ? {} : { [TICKET_HEADER]: t },
    });
    ws.binaryType = "nodebuffer";
    // Count from the first byte: the server's version can arrive before "open" is handled.
    received.set(ws, 0);
    ws.on("message", (data: Buffer) => received.set(ws, (received.get(ws) ?? 0) + data.length));
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      res.on("end", () =>
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })),
      );
    });
    ws.once("error", reject);
  });
}

function closed(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.once("close", (code) => resolve(code)));
}

const received = new WeakMap<WebSocket, number>();

async function handshake(ws: WebSocket): Promise<void> {
  ws.send(CLIENT_HANDSHAKE);
  await until(() => (received.get(ws) ?? 0) >= SERVER_HANDSHAKE_BYTES);
}

const until = async (check: () => boolean, ms = 2000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
};

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-gw-"));
  rfb = await startFakeRfb(path.join(dir, "slot0-g1.sock"));
  slots = new Map([[0, { index: 0, generation: 1, botId: "bot_a", state: "running", vncSocket: rfb.path }]]);
  events.length = 0;
  gateway = new ComputerGateway({
    listen: { path: socketPath() },
    stateDir: dir,
    slotAt: (index) => slots.get(index),
    log: (event) => events.push(event),
  });
  await gateway.start();
  gateway.configure({ computerId: COMPUTER, keys: [{ kid: "k1", key: keyOf(COMPUTER).toString("base64") }] });
});

afterEach(async () => {
  await gateway.close();
  await rfb.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("ComputerGateway tickets", () => {
  it("bridges a valid control ticket to the slot's socket, input included", async () => {
    const ws = await connect(ticket(claims()));
    await handshake(ws);
    ws.send(rfbMessages.keyEvent(true, 0x61));
    ws.send(rfbMessages.pointerEvent(1, 10, 20));
    await until(() => (rfb.received[0]?.length ?? 0) >= 14);
    expect(rfb.received[0]).toEqual(
      Buffer.concat([rfbMessages.keyEvent(true, 0x61), rfbMessages.pointerEvent(1, 10, 20)]),
    );
    expect(gateway.connections()).toHaveLength(1);
    ws.close();
  });

  it("drops KeyEvent, PointerEvent and ClientCutText from a view ticket in the gateway", async () => {
    const ws = await connect(ticket(claims({ policy: "view" })));
    await handshake(ws);
    ws.send(rfbMessages.keyEvent(true, 0x61));
    ws.send(Buffer.concat([rfbMessages.pointerEvent(1, 10, 20), rfbMessages.clientCutText("secret")]));
    ws.send(rfbMessages.updateRequest(true));
    await until(() => (rfb.received[0]?.length ?? 0) >= 10);
    await new Promise((r) => setTimeout(r, 100));
    expect(rfb.received[0]).toEqual(rfbMessages.updateRequest(true));
    expect(rfb.sharedFlags).toEqual([1]); // a viewer cannot ask for exclusive access
    expect(gateway.connections()[0]?.droppedInput).toBe(3);
    ws.close();
  });

  it("passes server bytes through intact and in order, pausing for a client that reads slowly", async () => {
    const ws = await connect(ticket(claims({ policy: "view" })));
    await handshake(ws);
    const chunks: Buffer[] = [];
    ws.on("message", (data: Buffer) => chunks.push(data));
    // Distinct bytes everywhere, so a reused read buffer overwritten before it was sent shows.
    const screen = randomBytes(8 * 1024 * 1024);
    ws.pause();
    for (let at = 0; at < screen.length; at += 100_000) rfb.push(screen.subarray(at, at + 100_000));
    await new Promise((r) => setTimeout(r, 300));
    ws.resume();
    await until(() => chunks.reduce((n, c) => n + c.length, 0) >= screen.length, 4000);
    expect(Buffer.concat(chunks).equals(screen)).toBe(true);
    ws.close();
  });

  it("closes a view connection whose stream it cannot parse (fail closed)", async () => {
    const ws = await connect(ticket(claims({ policy: "view" })));
    await handshake(ws);
    const code = closed(ws);
    ws.send(Buffer.from([99, 0, 0, 0]));
    expect(await code).toBe(1008);
  });

  it("refuses a forged or tampered ticket", async () => {
    const good = ticket(claims());
    const last = good.at(-3) === "A" ? "B" : "A";
    const tampered = `${good.slice(0, -3)}${last}${good.slice(-2)}`;
    await expect(connect(tampered)).rejects.toMatchObject({ status: 401 });
    await expect(connect(ticket(claims(), randomBytes(32)))).rejects.toMatchObject({ status: 401 });
    await expect(connect(undefined)).rejects.toMatchObject({ status: 401 });
    expect(events.filter((e) => e.event === "gateway.rejected").map((e) => e.reason)).toEqual([
      "forged",
      "forged",
      "missing_ticket",
    ]);
  });

  it("refuses an expired ticket", async () => {
    const now = Date.now();
    await expect(
      connect(ticket(claims({ issuedAt: now - 2000, expiresAt: now - 1000 }))),
    ).rejects.toMatchObject({
      status: 403,
      body: expect.stringContaining("expired"),
    });
  });

  it("refuses a ticket for another computer, even sealed with this computer's key", async () => {
    await expect(connect(ticket(claims({ computerId: "cmp_other" })))).rejects.toMatchObject({ status: 401 });
    await expect(connect(ticket(claims({ computerId: "cmp_other" }), keyOf(COMPUTER)))).rejects.toMatchObject(
      { status: 403, body: expect.stringContaining("wrong_computer") },
    );
  });

  it("revocation closes the live connection at once and refuses the ticket afterwards", async () => {
    const c = claims({ policy: "view" });
    const ws = await connect(ticket(c));
    await handshake(ws);
    const code = closed(ws);
    expect(gateway.revoke([{ id: c.id, expiresAt: Date.now() + 60_000 }])).toEqual({ closed: 1 });
    expect(await code).toBe(4001);
    await expect(connect(ticket(c))).rejects.toMatchObject({
      status: 403,
      body: expect.stringContaining("revoked"),
    });
  });

  it("a control-revocation rule closes control connections and keeps view ones", async () => {
    const view = await connect(ticket(claims({ policy: "view" })));
    const control = await connect(ticket(claims()));
    const controlClosed = closed(control);
    gateway.revoke([
      { botId: "bot_a", policy: "control", issuedAtOrBefore: Date.now(), expiresAt: Date.now() + 60_000 },
    ]);
    expect(await controlClosed).toBe(4001);
    expect(view.readyState).toBe(WebSocket.OPEN);
    // Capabilities minted after the rule still work.
    const later = await connect(ticket(claims({ issuedAt: Date.now() + 5 })));
    later.close();
    view.close();
  });

  it("a slot's teardown closes its connections; after reuse the old ticket is refused", async () => {
    const old = claims({ policy: "view" });
    const ws = await connect(ticket(old));
    const code = closed(ws);
    expect(gateway.closeSlot(0, 1)).toBe(1);
    expect(await code).toBe(4002);
    // The slot now serves another bot in generation 2 on another socket.
    const next = await startFakeRfb(path.join(dir, "slot0-g2.sock"));
    slots.set(0, { index: 0, generation: 2, botId: "bot_b", state: "running", vncSocket: next.path });
    await expect(connect(ticket(old))).rejects.toMatchObject({
      status: 410,
      body: expect.stringContaining("slot_gone"),
    });
    const fresh = await connect(ticket(claims({ botId: "bot_b", generation: 2 })));
    fresh.close();
    await next.close();
  });

  it("refuses everything until configured, and keeps its keys across restarts (0600 file)", async () => {
    await gateway.close();
    rmSync(path.join(dir, "gateway.key"));
    gateway = new ComputerGateway({
      listen: { path: socketPath() },
      stateDir: dir,
      slotAt: (i) => slots.get(i),
    });
    await gateway.start();
    await expect(connect(ticket(claims()))).rejects.toMatchObject({ status: 503 });
    gateway.configure({
      computerId: COMPUTER,
      keys: [{ kid: "k1", key: keyOf(COMPUTER).toString("base64") }],
    });
    await gateway.close();
    gateway = new ComputerGateway({
      listen: { path: socketPath() },
      stateDir: dir,
      slotAt: (i) => slots.get(i),
    });
    await gateway.start();
    (await connect(ticket(claims()))).close();
    const { statSync } = await import("node:fs");
    expect(statSync(path.join(dir, "gateway.key")).mode & 0o777).toBe(0o600);
  });

  it("logs rejections by reason without the ticket", async () => {
    const t = ticket(claims({ computerId: "cmp_other" }), keyOf(COMPUTER));
    await expect(connect(t)).rejects.toBeTruthy();
    const text = JSON.stringify(events);
    expect(text).toContain("wrong_computer");
    expect(text).not.toContain(t.slice(10, 40));
  });
});

describe("ComputerGateway control expiry (TKO-1)", () => {
  it("closes a control connection when its capability expires; a view connection stays", async () => {
    const expiresAt = Date.now() + 1200;
    const control = await connect(ticket(claims({ expiresAt })));
    const view = await connect(ticket(claims({ policy: "view", expiresAt })));
    const controlClosed = closed(control);
    const code = await Promise.race([controlClosed, new Promise((r) => setTimeout(() => r("open"), 3000))]);
    expect(code).toBe(4003);
    expect(Date.now() - expiresAt).toBeLessThan(1000);
    expect(view.readyState).toBe(WebSocket.OPEN);
    expect(gateway.connections().map((c) => c.policy)).toEqual(["view"]);
    view.close();
  });
});
