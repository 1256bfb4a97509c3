/**
 * The PTY server beside the gateway (TRM-4..6), through the real gateway listener, real python
 * PTY helper and real bash: a `terminal` ticket gets its own shell, as the workspace user named
 * through nss_wrapper when the uid has no passwd entry (/etc/passwd unchanged); view and
 * control tickets cannot open one; stop, revocation, expiry and slot teardown end every shell
 * within a second and remove the session files.
 */

import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  deriveScreenKey,
  newCapabilityId,
  type ScreenClaims,
  sealCapability,
} from "@rakazo/protocol/capability";
import { CLOSE_TERMINAL_STOPPED, TERMINAL_GATEWAY_PATH } from "@rakazo/protocol/terminal";
import { requireTools } from "@rakazo/sandbox/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ComputerGateway, type GatewaySlot, TICKET_HEADER } from "../gateway/computer-gateway.ts";
import { openTerminal, type TerminalClient } from "../testing/terminal-client.ts";

const gate = requireTools("PTY server beside the gateway", [
  "python3",
  "bash",
  // As root the shell's uid has no passwd entry and is named through nss_wrapper (TRM-5).
  ...(process.getuid?.() === 0 ? ["/usr/lib/x86_64-linux-gnu/libnss_wrapper.so"] : []),
]);
const master = randomBytes(32);
const COMPUTER = "cmp_terminaltest000000";
const key = deriveScreenKey(master, "gateway", COMPUTER);
/** As root (the host test runner), shells run as a uid with no passwd entry, like TRM-5's case. */
const ROOT = process.getuid?.() === 0;
const SHELL_UID = ROOT ? 4242 : (process.getuid?.() ?? 1000);

let dir: string;
let workspace: string;
let gateway: ComputerGateway;
let slots: Map<number, GatewaySlot>;
const open: TerminalClient[] = [];
const events: Record<string, unknown>[] = [];

function claims(overrides: Partial<ScreenClaims> = {}): ScreenClaims {
  const now = Date.now();
  return {
    id: newCapabilityId(),
    computerId: COMPUTER,
    botId: "bot_a",
    slot: 0,
    generation: 1,
    policy: "terminal",
    subject: "usr_1",
    issuedAt: now,
    expiresAt: now + 60_000,
    ...overrides,
  };
}

const ticket = (c: ScreenClaims): string => sealCapability(key, "k1", "gateway", c);

async function shell(c: ScreenClaims = claims(), route = TERMINAL_GATEWAY_PATH): Promise<TerminalClient> {
  const client = await openTerminal(`ws+unix://${path.join(dir, "gateway.sock")}:${route}`, {
    [TICKET_HEADER]: ticket(c),
  });
  open.push(client);
  return client;
}

async function refusal(c: ScreenClaims, route = TERMINAL_GATEWAY_PATH): Promise<number> {
  try {
    const client = await shell(c, route);
    client.ws.close();
    return 101;
  } catch (error) {
    return (error as { status?: number }).status ?? 0;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** `$$` of the shell, read from its own output. */
async function shellPid(client: TerminalClient): Promise<number> {
  const since = client.output().length;
  client.type("echo PID=$$\n");
  const match = await client.waitFor(/PID=(\d+)\r?\n/, 10_000, since);
  return Number(match[1]);
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-term-"));
  chmodSync(dir, 0o755);
  workspace = path.join(dir, "workspace");
  mkdirSync(path.join(workspace, "bots", "bot_a"), { recursive: true });
  chmodSync(workspace, 0o777);
  chmodSync(path.join(workspace, "bots", "bot_a"), 0o777);
  const vncSocket = path.join(dir, "slot0-g1.sock");
  writeFileSync(vncSocket, "");
  slots = new Map([[0, { index: 0, generation: 1, botId: "bot_a", state: "running", vncSocket }]]);
  events.length = 0;
  gateway = new ComputerGateway({
    listen: { path: path.join(dir, "gateway.sock") },
    stateDir: dir,
    slotAt: (index) => slots.get(index),
    log: (event) => events.push(event),
    terminal: ROOT ? { uid: SHELL_UID, gid: SHELL_UID } : {},
  });
  await gateway.start();
  gateway.configure({ computerId: COMPUTER, keys: [{ kid: "k1", key: key.toString("base64") }] });
  gateway.terminal.start("bot_a", { cwd: path.join(workspace, "bots", "bot_a"), env: { HOME: workspace } });
});

afterEach(async () => {
  for (const client of open.splice(0)) client.ws.terminate();
  await gateway.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(gate.skip)(gate.title, { timeout: 30_000 }, () => {
  it("runs a shell as the workspace user in the bot's folder, named through nss_wrapper (TRM-5)", async () => {
    const passwd = createHash("sha256").update(readFileSync("/etc/passwd")).digest("hex");
    const client = await shell();
    client.type("whoami; id -u; pwd; echo END\n");
    const match = await client.waitFor(/[\r\n](\w+)\r\n(\d+)\r\n(\/\S*)\r\nEND/);
    expect(Number(match[2])).toBe(SHELL_UID);
    expect(Number(match[2])).not.toBe(0);
    expect(match[3]).toBe(path.join(workspace, "bots", "bot_a"));
    // As root the uid has no passwd entry: nss_wrapper names it `rakazo`. Otherwise the shell is
    // this user's own, named by /etc/passwd; either way `whoami` must answer a name.
    expect(match[1]).toBe(ROOT ? "rakazo" : os.userInfo().username);
    expect(createHash("sha256").update(readFileSync("/etc/passwd")).digest("hex")).toBe(passwd);
  });

  it("gives each connection its own shell and applies resize frames", async () => {
    const first = await shell();
    const second = await shell();
    const [a, b] = [await shellPid(first), await shellPid(second)];
    expect(a).not.toBe(b);
    const since = first.output().length;
    first.resize(100, 30);
    first.type("stty size\n");
    await first.waitFor(/30 100/, 10_000, since);
  });

  it("stop ends every shell of the bot within a second and removes the session files (TRM-6)", async () => {
    const clients = [await shell(), await shell()];
    const pids = await Promise.all(clients.map(shellPid));
    expect(readdirSync(path.join(dir, "terminals"))).toHaveLength(2);
    const started = performance.now();
    expect(gateway.terminal.stop("bot_a")).toBe(2);
    const codes = await Promise.all(clients.map((client) => client.closed));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(codes).toEqual([CLOSE_TERMINAL_STOPPED, CLOSE_TERMINAL_STOPPED]);
    await until(() => pids.every((pid) => !alive(pid)), 1000);
    expect(readdirSync(path.join(dir, "terminals"))).toEqual([]);
    // Stopped: a new connection is refused until terminal.start again.
    expect(await refusal(claims())).toBe(410);
  });

  it("revocation, expiry and slot teardown close open shells (TRM-6)", async () => {
    const revoked = claims();
    const a = await shell(revoked);
    gateway.revoke([{ id: revoked.id, expiresAt: Date.now() + 60_000 }]);
    expect(await a.closed).toBe(4001);
    expect(await refusal(revoked)).toBe(403);

    const b = await shell(claims({ expiresAt: Date.now() + 800 }));
    const pid = await shellPid(b);
    expect(await b.closed).toBe(4003);
    await until(() => !alive(pid), 1000);

    const c = await shell();
    gateway.closeSlot(0, 1);
    expect(await c.closed).toBe(4002);
    expect(gateway.terminal.started("bot_a")).toBe(false);
    expect(readdirSync(path.join(dir, "terminals"))).toEqual([]);
  });

  it("refuses view and control tickets, terminal tickets on the screen route, expired and foreign tickets", async () => {
    expect(await refusal(claims({ policy: "view" }))).toBe(403);
    expect(await refusal(claims({ policy: "control" }))).toBe(403);
    expect(await refusal(claims(), "/v1/rfb")).toBe(403);
    expect(await refusal(claims({ expiresAt: Date.now() - 1 }))).toBe(403);
    expect(await refusal(claims({ computerId: "cmp_othercomputer00000" }))).toBe(403);
    // Another bot's terminal ticket: its server is not started (and its slot is not this one).
    expect(await refusal(claims({ botId: "bot_b" }))).toBe(410);
    const reasons = events.filter((e) => e.event === "gateway.rejected").map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(["wrong_policy", "expired", "wrong_computer"]));
  });

  it("answers a frame the protocol does not define with an error frame and closes 1008", async () => {
    const client = await shell();
    client.ws.send(Buffer.from([9, 1, 2]));
    expect(await client.closed).toBe(1008);
    expect(client.frames().at(-1)).toMatchObject({ type: "error", code: "bad_frame" });
  });

  it("reports the shell's exit status and closes", async () => {
    const client = await shell();
    client.type("exit 7\n");
    expect(await client.closed).toBe(1000);
    expect(client.frames().at(-1)).toEqual({ type: "exit", code: 7, signal: null });
    await until(
      () => !existsSync(path.join(dir, "terminals")) || readdirSync(path.join(dir, "terminals")).length === 0,
    );
  });
});

const until = async (check: () => boolean, ms = 2000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
};
