// TRM-8: the fake computer's gateway, reached directly (no proxy): which tickets it serves on
// `/v1/pty`, and that stopping the terminal, the screen or the machine ends its shells. The path
// through the authority and the web proxy is apps/web/src/terminal.integration.test.ts's.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TICKET_HEADER } from "@rakazo/protocol";
import { sealCapability } from "@rakazo/protocol/capability";
import { decodeTerminalFrame, terminalData } from "@rakazo/protocol/terminal";
import {
  gatewayKeysFor,
  gatewayTicket,
  generateScreenKeys,
  mintScreenCapability,
  parseScreenKeys,
  type ScreenPolicy,
} from "@rakazo/screens";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Sandbox, SandboxProvider, ScreenGatewayTarget } from "../../provider.ts";
import { createFakeProvider } from "./fake-provider.ts";

const keyring = parseScreenKeys(generateScreenKeys("k1"));
const computerId = "cmp_fakegateway000000000";
const botId = "bot_fakegateway000000000";
let root: string;
let provider: SandboxProvider;
let sandbox: Sandbox;
let target: ScreenGatewayTarget;
let slot: { index: number; generation: number };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "rakazo-fake-gw-"));
  provider = createFakeProvider({ rootDir: root });
  const { ref } = await provider.provision({ computerId, mode: "team", homeKey: "home_gw" });
  sandbox = provider.sandbox(ref);
  await sandbox.screens?.configure(gatewayKeysFor(keyring, computerId));
  slot = (await sandbox.desktop?.observe(botId))?.slot ?? { index: -1, generation: -1 };
  await sandbox.files.write("bots/b/keep.txt", "x");
  await sandbox.connectTerminal?.({ botId, slot, cwd: "bots/b" });
  target = (await sandbox.screens?.target()) as ScreenGatewayTarget;
});
afterAll(async () => {
  await provider.destroy(sandbox.ref);
  await rm(root, { recursive: true, force: true });
});

function ticket(
  overrides: { policy?: ScreenPolicy; botId?: string; computerId?: string; ttlMs?: number } = {},
) {
  const { claims } = mintScreenCapability(keyring, {
    computerId: overrides.computerId ?? computerId,
    botId: overrides.botId ?? botId,
    slot: slot.index,
    generation: slot.generation,
    policy: overrides.policy ?? "terminal",
    subject: "usr_gw",
    ttlMs: overrides.ttlMs ?? 60_000,
  });
  return { claims, ticket: gatewayTicket(keyring, claims) };
}

/** Opens `/v1/pty` with a ticket: the socket, or the refusal's status. */
function connect(value: string | undefined, route = "/v1/pty") {
  if (target.transport !== "http") throw new Error("the fake gateway listens on loopback TCP");
  const ws = new WebSocket(`${target.url.replace(/^http/, "ws")}${route}`, {
    headers: value ? { [TICKET_HEADER]: value } : {},
  });
  let output = "";
  ws.on("message", (data: Buffer) => {
    const frame = decodeTerminalFrame(new Uint8Array(data));
    if (frame.type === "data") output += Buffer.from(frame.data).toString();
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  const opened = new Promise<number>((resolve) => {
    ws.once("open", () => resolve(101));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("error", () => resolve(0));
  });
  return { ws, opened, closed, output: () => output };
}

describe("the fake computer's terminal gateway (TRM-8)", () => {
  it("serves a terminal ticket of its computer and bot, and refuses every other", async () => {
    const good = connect(ticket().ticket);
    expect(await good.opened).toBe(101);
    good.ws.send(terminalData("pwd\r"));
    await expect.poll(good.output).toMatch(/\/workspace\/bots\/b\r\n/);
    good.ws.close();

    expect(await connect(undefined).opened).toBe(401);
    expect(await connect(`${ticket().ticket.slice(0, -4)}AAAA`).opened).toBe(401);
    expect(await connect(ticket({ policy: "control" }).ticket).opened).toBe(403);
    expect(await connect(ticket({ policy: "view" }).ticket).opened).toBe(403);
    // Another computer's ticket is sealed with its own key: forged here.
    expect(await connect(ticket({ computerId: "cmp_other00000000000000" }).ticket).opened).toBe(401);
    // Sealed with this computer's key but naming another computer: wrong_computer.
    const [own] = gatewayKeysFor(keyring, computerId).keys;
    const elsewhere = { ...ticket().claims, computerId: "cmp_other00000000000000" };
    const sealed = sealCapability(
      Buffer.from(own?.key ?? "", "base64"),
      own?.kid ?? "",
      "gateway",
      elsewhere,
    );
    expect(await connect(sealed).opened).toBe(403);
    expect(await sandbox.screens?.check(sealed)).toEqual({ ok: false, reason: "wrong_computer" });
    expect(await connect(ticket({ botId: "bot_other00000000000000" }).ticket).opened).toBe(410);
    expect(await connect(ticket({ ttlMs: -1 }).ticket).opened).toBe(403);
    expect(await connect(ticket().ticket, "/v1/rfb").opened).toBe(403);
    const revoked = ticket();
    await sandbox.screens?.revoke([{ id: revoked.claims.id, expiresAt: Date.now() + 60_000 }]);
    expect(await connect(revoked.ticket).opened).toBe(403);
    expect(await sandbox.screens?.check(revoked.ticket)).toEqual({ ok: false, reason: "revoked" });
  });

  it("ends shells on revocation, terminal stop and screen release; refuses a stopped terminal", async () => {
    const revoked = ticket();
    const shell = connect(revoked.ticket);
    expect(await shell.opened).toBe(101);
    await sandbox.screens?.revoke([{ id: revoked.claims.id, expiresAt: Date.now() + 60_000 }]);
    expect(await shell.closed).toBe(4001);

    const stopped = connect(ticket().ticket);
    expect(await stopped.opened).toBe(101);
    expect(await sandbox.stopTerminal?.({ botId })).toEqual({ closed: 1 });
    expect(await stopped.closed).toBe(4004);
    expect(await connect(ticket().ticket).opened).toBe(410);

    await sandbox.connectTerminal?.({ botId, slot, cwd: "bots/b" });
    const released = connect(ticket().ticket);
    expect(await released.opened).toBe(101);
    await sandbox.desktop?.release(botId);
    expect(await released.closed).toBe(4002);
  });

  it("enforces what another process (the worker's provider) revokes and stops, from the shared machine folder", async () => {
    const worker = createFakeProvider({ rootDir: root }).sandbox(sandbox.ref);
    slot = (await sandbox.desktop?.observe(botId))?.slot ?? slot;
    await sandbox.connectTerminal?.({ botId, slot, cwd: "bots/b" });
    const revoked = ticket();
    const first = connect(revoked.ticket);
    expect(await first.opened).toBe(101);
    await worker.screens?.revoke([{ id: revoked.claims.id, expiresAt: Date.now() + 60_000 }]);
    expect(await first.closed).toBe(4001);
    const second = connect(ticket().ticket);
    expect(await second.opened).toBe(101);
    await worker.stopTerminal?.({ botId });
    expect(await second.closed).toBe(4004);
  });
});
