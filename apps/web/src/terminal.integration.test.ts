/**
 * The browser terminal without Docker (TRM-8): real Postgres and API (authority over HTTP), the
 * web service's proxy, and the fake provider's loopback gateway serving its emulated shell with
 * the one frame protocol (@rakazo/protocol/terminal). The path is the real one: terminalUrl
 * mints a sealed `terminal` capability, the proxy asks the authority, which checks the ticket
 * against the fake's gateway, and bridges to its `/v1/pty`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  decodeTerminalFrame,
  encodeTerminalFrame,
  type TerminalFrame,
  terminalData,
} from "@rakazo/protocol/terminal";
import { createFakeProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { mintScreenCapability } from "@rakazo/screens";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CHROMIUM, type ScreenSystem, startScreenSystem } from "./testing/screen-system.ts";

/** Releasing control closes the shells within a second (TRM-6). */
const CLOSE_WITHIN_MS = 1000;

interface Terminal {
  readonly ws: WebSocket;
  readonly frames: TerminalFrame[];
  /** Everything the shell printed so far. */
  text(): string;
  /** Resolves once the printed text (after `from`) matches. */
  until(pattern: RegExp, from?: number): Promise<RegExpExecArray>;
  readonly closed: Promise<{ code: number; at: number }>;
}

function openTerminal(url: string): Promise<Terminal> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.binaryType = "nodebuffer";
  const frames: TerminalFrame[] = [];
  let output = "";
  const waiters = new Set<() => void>();
  const decoder = new TextDecoder();
  ws.on("message", (data: Buffer) => {
    const frame = decodeTerminalFrame(new Uint8Array(data));
    frames.push(frame);
    if (frame.type === "data") output += decoder.decode(frame.data, { stream: true });
    for (const wake of waiters) wake();
  });
  const closed = new Promise<{ code: number; at: number }>((resolve) =>
    ws.once("close", (code) => resolve({ code, at: Date.now() })),
  );
  const terminal: Terminal = {
    ws,
    frames,
    text: () => output,
    closed,
    until: (pattern, from = 0) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output.slice(from));
          if (!match) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(match);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} in ${JSON.stringify(output.slice(from))}`));
        }, 10_000);
        waiters.add(check);
        check();
      }),
  };
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(terminal));
    ws.once("unexpected-response", (_request, response) =>
      reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode })),
    );
    ws.once("error", reject);
  });
}

/** Types a line and waits for the prompt after its output; the output between. */
async function run(terminal: Terminal, line: string): Promise<string> {
  const from = terminal.text().length;
  terminal.ws.send(terminalData(`${line}\r`));
  const match = await terminal.until(/\r\n([\s\S]*?)rakazo:~[^\r\n]*\$ $/, from);
  return match[1] ?? "";
}

async function refusal(url: string): Promise<number> {
  try {
    const terminal = await openTerminal(url);
    terminal.ws.close();
    return 101;
  } catch (error) {
    return (error as { status?: number }).status ?? 0;
  }
}

describe("the browser terminal on the fake computer, through proxy and gateway (TRM-8)", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "rkz-i17b-term-"));
  let system: ScreenSystem;
  let tenant: Awaited<ReturnType<ScreenSystem["tenant"]>>;
  let computerId: string;

  const rpc = async (name: string, body: Record<string, unknown> = {}) => {
    const res = await system.rpc(name, { computerId, botId: tenant.botId, ...body }, tenant.token);
    expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json.result;
  };
  const pty = (url: string) => `${url.replace(/^http/, "ws")}pty`;

  beforeAll(async () => {
    system = await startScreenSystem({ provider: createFakeProvider({ rootDir: path.join(root, "fake") }) });
    tenant = await system.tenant("term");
    computerId = await system.runningComputer(tenant.spaceId, tenant.token);
  }, 60_000);

  afterAll(async () => {
    await system?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("echoes what is typed, runs `echo hi`, acknowledges a resize, and `exit 3` ends with an exit frame", async () => {
    await rpc("computer/takeControl");
    const { websocketUrl, url } = await rpc("computer/terminalUrl");
    expect(websocketUrl).toBe(pty(url));
    const terminal = await openTerminal(websocketUrl);
    // The shell starts in the bot's folder (CMP-1).
    await terminal.until(new RegExp(`rakazo:~/bots/${tenant.botId}\\$ $`));
    terminal.ws.send(terminalData("ech"));
    await terminal.until(/\$ ech$/);
    expect(await run(terminal, "o hi")).toBe("hi\r\n");
    expect(await run(terminal, "nope")).toBe("nope: command not found\r\n");
    terminal.ws.send(encodeTerminalFrame({ type: "resize", cols: 132, rows: 43 }));
    expect(await run(terminal, "stty size")).toBe("43 132\r\n");
    terminal.ws.send(terminalData("exit 3\r"));
    const { code } = await terminal.closed;
    expect(code).toBe(1000);
    expect(terminal.frames.at(-1)).toEqual({ type: "exit", code: 3, signal: null });
    await rpc("computer/releaseControl");
  });

  it("gives a second connection its own shell", async () => {
    await rpc("computer/takeControl");
    const { websocketUrl } = await rpc("computer/terminalUrl");
    const first = await openTerminal(websocketUrl);
    const second = await openTerminal(websocketUrl);
    await first.until(/\$ $/);
    await second.until(/\$ $/);
    await run(first, "mkdir sub; cd sub");
    const [pidA, pidB] = [await run(first, "echo $$"), await run(second, "echo $$")];
    expect(pidA).toMatch(/^\d+\r\n$/);
    expect(pidB).toMatch(/^\d+\r\n$/);
    expect(pidA).not.toBe(pidB);
    expect(await run(first, "pwd")).toMatch(/\/sub\r\n$/);
    expect(await run(second, "pwd")).not.toMatch(/\/sub\r\n$/);
    first.ws.close();
    second.ws.close();
    await Promise.all([first.closed, second.closed]);
    await rpc("computer/releaseControl");
  });

  it("refuses a view capability, another bot's, another computer's and an expired one", async () => {
    await rpc("computer/takeControl");
    const { url, slot } = await rpc("computer/terminalUrl");
    const view = await rpc("computer/screenUrl", { policy: "view" });
    const mint = (overrides: { botId?: string; computerId?: string; ttlMs?: number; now?: number }) => {
      const { token } = mintScreenCapability(system.keyring, {
        computerId,
        botId: tenant.botId,
        slot: slot.index,
        generation: slot.generation,
        policy: "terminal",
        subject: tenant.userId,
        ttlMs: 60_000,
        ...overrides,
      });
      return `${system.web.url}/terminals/${token}/pty`;
    };
    // The real capability opens; each of the others is refused before any shell starts.
    expect(await refusal(pty(url))).toBe(101);
    const viewCapability = new URL(view.url).pathname.split("/")[2];
    expect(await refusal(`${system.web.url}/terminals/${viewCapability}/pty`)).toBe(403);
    expect(await refusal(mint({ botId: "bot_someoneelse000000000" }))).toBe(403);
    expect(await refusal(mint({ computerId: "cmp_elsewhere00000000000" }))).toBe(403);
    expect(await refusal(mint({ ttlMs: 1000, now: Date.now() - 5000 }))).toBe(403);
    const reasons = system.logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === "screen.proxy.target_rejected")
      .map((entry) => [entry["screen.reason"], entry["screen.authority_reason"] ?? null]);
    expect(reasons).toEqual(
      expect.arrayContaining([
        ["wrong_policy", null],
        ["authority_rejected", "slot_gone"],
        ["authority_rejected", "computer_gone"],
        ["authority_rejected", "expired"],
      ]),
    );
    await rpc("computer/releaseControl");
  });

  const missing = missingOrFail("the terminal page in headless Chromium", [CHROMIUM.executablePath]);
  it.skipIf(missing.length > 0)(
    missing.length > 0
      ? `the xterm.js page in headless Chromium types and reads through the proxy — skipped, missing: ${missing.join(", ")}`
      : "the xterm.js page in headless Chromium types and reads through the proxy; releasing control closes it",
    { timeout: 60_000 },
    async () => {
      await rpc("computer/takeControl");
      const { url } = await rpc("computer/terminalUrl");
      let browser: Browser | undefined;
      try {
        browser = await chromium.launch(CHROMIUM);
        const page = await browser.newPage({ viewport: { width: 1000, height: 600 } });
        await page.goto(url);
        await page.waitForSelector("html[data-status=connected]", { timeout: 30_000 });
        await page.keyboard.type("echo hi from chromium\n", { delay: 5 });
        const screen = () =>
          page.evaluate(() => {
            const buffer = (globalThis as any).__rakazoTerminal.buffer.active;
            const lines: string[] = [];
            for (let i = 0; i < buffer.length; i++)
              lines.push(buffer.getLine(i)?.translateToString(true) ?? "");
            return lines.join("\n");
          });
        await expect
          .poll(screen, { timeout: 10_000 })
          .toMatch(/\$ echo hi from chromium\s*\nhi from chromium\s*\n/);
        const released = performance.now();
        await rpc("computer/releaseControl");
        await page.waitForSelector("html[data-status=closed]", { timeout: CLOSE_WITHIN_MS });
        expect(performance.now() - released).toBeLessThan(CLOSE_WITHIN_MS);
      } finally {
        await browser?.close();
      }
    },
  );

  it("releasing control closes every shell within a second and refuses the capability after", async () => {
    await rpc("computer/takeControl");
    const { websocketUrl } = await rpc("computer/terminalUrl");
    const shells = [await openTerminal(websocketUrl), await openTerminal(websocketUrl)];
    await Promise.all(shells.map((shell) => shell.until(/\$ $/)));
    const released = Date.now();
    await rpc("computer/releaseControl");
    for (const shell of shells) {
      const { code, at } = await shell.closed;
      expect(code).toBe(4001);
      expect(at - released).toBeLessThan(CLOSE_WITHIN_MS);
    }
    expect(await refusal(websocketUrl)).toBe(403);
  });
});
