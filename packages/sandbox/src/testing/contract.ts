/**
 * The conformance suite every `SandboxProvider` runs (PRV-1): the fake in unit tests, Docker
 * against a real engine, cloud adapters against their local fake APIs. A skipped test states
 * its reason.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { Readable } from "node:stream";
import { gatewayUrl, TICKET_HEADER } from "@rakazo/protocol";
import { CLOSE_TERMINAL_STOPPED } from "@rakazo/protocol/terminal";
import {
  gatewayKeysFor,
  gatewayTicket,
  generateScreenKeys,
  mintScreenCapability,
  parseScreenKeys,
  type ScreenPolicy,
} from "@rakazo/screens";
import { afterAll, describe, expect, it } from "vitest";
import { isSandboxError, type SandboxErrorCode } from "../errors.ts";
import type { Sandbox, SandboxDesktop, SandboxProvider, ScreenGatewayTarget } from "../provider.ts";
import { buildArchive, readAll } from "./archive.ts";
import { type ContractTerminal, openContractTerminal } from "./terminal-client.ts";

export interface ContractOptions {
  readonly name: string;
  readonly create: () => Promise<SandboxProvider>;
  readonly skip?: readonly { readonly test: string; readonly reason: string }[];
  /** Runs only these tests; the others are skipped with `reason` (e.g. covered by another run). */
  readonly only?: { readonly tests: readonly string[]; readonly reason: string };
  /** Per-test timeout; real machines need longer. */
  readonly timeoutMs?: number;
}

async function expectCode(promise: Promise<unknown>, code: SandboxErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeDefined();
  expect(isSandboxError(error) ? error.code : error).toBe(code);
}

/** Observes until two consecutive frames are identical (within 15 s); returns that frame. */
async function settledFrame(desktop: SandboxDesktop, botId: string) {
  let previous = await desktop.observe(botId);
  for (let i = 0; i < 30; i++) {
    await new Promise((done) => setTimeout(done, i === 0 ? 0 : 500));
    const next = await desktop.observe(botId);
    if (next.frameHash === previous.frameHash) return next;
    previous = next;
  }
  throw new Error(`the screen of ${botId} never settled: consecutive frames keep differing`);
}

/** The contract's test names, so an adapter's second run can select a subset with reasons. */
export const CONTRACT_TESTS = {
  desktop: [
    "desktops: observe is a PNG, unchanged frames hash equal, typing changes the frame",
    "desktops: bots get distinct slots; release frees one",
    "desktops: two bots at once keep their own cookies; a released bot's profile keeps them (CMP-2)",
    "screens: view and control tokens of a recycled slot are refused (SCR-2)",
  ],
  terminal: [
    "terminal: shells run as the workspace user in the bot's folder, one per session; stopping closes all within 1 s (TRM-4..6)",
  ],
  processes: ["background commands: start, stream output, read again from another instance, kill the group"],
} as const;

/**
 * A site on the computer's own loopback (started through exec, so it runs where the bot's
 * browser runs): sets `visitor=<nonce>` on a first visit and logs every complete visit with the
 * Cookie it got. Listens on port 0 and writes the port it got into the workspace.
 */
const COOKIE_SITE = `
const http = require("node:http"), fs = require("node:fs");
const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  const nonce = url.searchParams.get("nonce") || "";
  const cookie = req.headers.cookie || "";
  const headers = { "content-type": "text/html" };
  // Only complete visits count: the omnibox fetches speculatively while a URL is typed.
  if (url.pathname === "/visit" && /-[0-9a-f]{8}$/.test(nonce)) {
    fs.appendFileSync(".contract-site/visits.jsonl", JSON.stringify({ nonce, cookie }) + "\\n");
    if (!/visitor=/.test(cookie)) headers["set-cookie"] = "visitor=" + nonce + "; Max-Age=86400; Path=/";
  }
  res.writeHead(200, headers);
  res.end("<h1>contract site</h1>");
});
server.listen(0, "127.0.0.1", () => fs.writeFileSync(".contract-site/port", String(server.address().port)));
`;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** `GET /v1/screen` with a ticket, as the web proxy asks the gateway; the HTTP status. */
function gatewayStatus(target: ScreenGatewayTarget, ticket: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { [TICKET_HEADER]: ticket };
    const request =
      target.transport === "unix"
        ? http.request({
            socketPath: target.socketPath,
            path: "/v1/screen",
            headers,
            agent: false,
            timeout: 10_000,
          })
        : http.request(gatewayUrl(target.url, "/v1/screen"), {
            headers: { ...target.headers, ...headers },
            agent: false,
            timeout: 10_000,
          });
    request.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("timeout", () => request.destroy(new Error("gateway timed out")));
    request.on("error", reject);
    request.end();
  });
}

export function runSandboxProviderContract(options: ContractOptions): void {
  const skipped = new Map((options.skip ?? []).map((s) => [s.test, s.reason]));
  const timeout = options.timeoutMs ?? 20_000;

  describe(`SandboxProvider contract: ${options.name}`, () => {
    let provider: SandboxProvider;
    const refs: string[] = [];

    const test = (name: string, body: () => Promise<void>) => {
      const reason =
        skipped.get(name) ??
        (options.only && !options.only.tests.includes(name) ? options.only.reason : undefined);
      // A skip is declared by the adapter's suite with its reason, e.g. "no desktop on this provider".
      if (reason !== undefined) it.skip(`${name} (skipped: ${reason})`, body);
      else it(name, body, timeout);
    };

    const machine = async (): Promise<{ ref: string; sandbox: Sandbox; computerId: string }> => {
      provider ??= await options.create();
      const computerId = `cmp_contract${randomBytes(6).toString("hex")}`;
      const { ref } = await provider.provision({ computerId, mode: "team", homeKey: computerId });
      refs.push(ref);
      return { ref, sandbox: provider.sandbox(ref), computerId };
    };

    afterAll(async () => {
      for (const ref of refs) {
        await provider.destroy(ref).catch((error: unknown) => {
          console.error(`contract cleanup: could not destroy ${ref}`, error);
        });
      }
    }, 60_000);

    test("provision creates a running machine and reconnects by ref", async () => {
      provider ??= await options.create();
      const computerId = `cmp_contract${randomBytes(6).toString("hex")}`;
      const first = await provider.provision({ computerId, mode: "team", homeKey: computerId });
      refs.push(first.ref);
      expect(first.replaced).toBe(true);
      expect(await provider.status(first.ref)).toBe("running");
      const again = await provider.provision({
        computerId,
        mode: "team",
        homeKey: computerId,
        ref: first.ref,
      });
      expect(again).toEqual({ ref: first.ref, replaced: false });
    });

    test("a destroyed machine is missing and provision replaces it (PRV-3)", async () => {
      const { ref } = await machine();
      await provider.destroy(ref);
      expect(await provider.status(ref)).toBe("missing");
      await provider.destroy(ref); // idempotent
      await expectCode(provider.sandbox(ref).exec({ argv: ["true"] }), "SANDBOX_GONE");
      const computerId = `cmp_contract${randomBytes(6).toString("hex")}`;
      const next = await provider.provision({ computerId, mode: "team", homeKey: computerId, ref });
      refs.push(next.ref);
      expect(next.replaced).toBe(true);
      expect(next.ref).not.toBe(ref);
    });

    test("stop keeps the workspace; provision starts the same machine again", async () => {
      const { ref, sandbox, computerId } = await machine();
      await sandbox.files.write("kept.txt", "still here");
      await provider.stop(ref);
      expect(await provider.status(ref)).toBe("stopped");
      await expectCode(sandbox.exec({ argv: ["true"] }), "SANDBOX_NOT_RUNNING");
      const again = await provider.provision({ computerId, mode: "team", homeKey: computerId, ref });
      expect(again.replaced).toBe(false);
      expect(Buffer.from(await sandbox.files.read("kept.txt")).toString()).toBe("still here");
    });

    test("exec returns exit code, stdout and stderr, and streams output", async () => {
      const { sandbox } = await machine();
      const chunks: string[] = [];
      const hi = await sandbox.exec({ argv: ["echo", "hi"], onOutput: (c) => chunks.push(c.data) });
      expect(hi).toEqual({ exitCode: 0, stdout: "hi\n", stderr: "", timedOut: false });
      expect(chunks.join("")).toBe("hi\n");
      expect((await sandbox.exec({ argv: ["sh", "-c", "exit 3"] })).exitCode).toBe(3);
      const missing = await sandbox.exec({ argv: ["ls", "no-such-file"] });
      expect(missing.exitCode).not.toBe(0);
      expect(missing.stderr).toContain("no-such-file");
      const unknown = await sandbox.exec({ argv: ["rakazo-no-such-command"] });
      expect(unknown.exitCode).toBe(127);
    });

    test("exec passes stdin, cwd and env", async () => {
      const { sandbox } = await machine();
      expect((await sandbox.exec({ argv: ["cat"], stdin: "from stdin" })).stdout).toBe("from stdin");
      await sandbox.files.write("sub/dir/.keep", "");
      expect((await sandbox.exec({ argv: ["pwd"], cwd: "sub/dir" })).stdout.trim()).toMatch(/\/sub\/dir$/);
      expect((await sandbox.exec({ argv: ["env"], env: { RAKAZO_PROBE: "42" } })).stdout).toContain(
        "RAKAZO_PROBE=42",
      );
    });

    test("exec past its timeout is killed and reported", async () => {
      const { sandbox } = await machine();
      const started = Date.now();
      const result = await sandbox.exec({ argv: ["sleep", "30"], timeoutMs: 300 });
      expect(result.timedOut).toBe(true);
      expect(result.exitCode).toBe(124);
      expect(Date.now() - started).toBeLessThan(15_000);
    });

    test("files: write, read, list; exec sees the same workspace", async () => {
      const { sandbox } = await machine();
      const binary = randomBytes(3000);
      await sandbox.files.write("docs/notes.txt", "héllo wörld");
      await sandbox.files.write("docs/blob.bin", binary);
      expect(Buffer.from(await sandbox.files.read("docs/notes.txt")).toString()).toBe("héllo wörld");
      expect(Buffer.from(await sandbox.files.read("docs/blob.bin")).equals(binary)).toBe(true);
      const listing = await sandbox.files.list("docs");
      expect(listing.map((e) => [e.name, e.type, e.size])).toEqual([
        ["blob.bin", "file", 3000],
        ["notes.txt", "file", Buffer.byteLength("héllo wörld")],
      ]);
      expect(listing[0]?.path).toBe("docs/blob.bin");
      const root = await sandbox.files.list("");
      expect(root.find((e) => e.name === "docs")?.type).toBe("directory");
      expect((await sandbox.exec({ argv: ["cat", "docs/notes.txt"] })).stdout).toBe("héllo wörld");
    });

    test("files: missing, oversized and escaping paths get stable codes", async () => {
      const { sandbox } = await machine();
      await expectCode(sandbox.files.read("nope.txt"), "FILE_NOT_FOUND");
      await expectCode(sandbox.files.list("nope"), "FILE_NOT_FOUND");
      await sandbox.files.write("big.txt", "x".repeat(100));
      await expectCode(sandbox.files.read("big.txt", { maxBytes: 10 }), "FILE_TOO_LARGE");
      await expectCode(sandbox.files.read("../etc/passwd"), "INVALID_PATH");
      await expectCode(sandbox.files.read("/etc/passwd"), "INVALID_PATH");
      await expectCode(sandbox.files.write("a/../../x", "no"), "INVALID_PATH");
    });

    test("workspace export restores byte-identical onto a replacement machine", async () => {
      const { sandbox } = await machine();
      const blob = randomBytes(200_000);
      await sandbox.files.write("a/b/c.bin", blob);
      await sandbox.files.write("top.txt", "top");
      const archive = await readAll(await sandbox.files.exportWorkspace());
      const { sandbox: replacement } = await machine();
      await replacement.files.importWorkspace(Readable.from(archive));
      expect(Buffer.from(await replacement.files.read("a/b/c.bin")).equals(blob)).toBe(true);
      expect(Buffer.from(await replacement.files.read("top.txt")).toString()).toBe("top");
    });

    test("a hostile archive is refused and the workspace is left untouched (PER-6)", async () => {
      const { sandbox } = await machine();
      await sandbox.files.write("precious.txt", "keep me");
      const hostile = [
        [
          { name: "ok.txt", data: "fine" },
          { name: "../escape.txt", data: "evil" },
        ],
        [{ name: "/abs.txt", data: "evil" }],
        [{ name: "link", type: "symlink" as const, linkname: "/etc" }],
        [{ name: "hard", type: "link" as const, linkname: "precious.txt" }],
      ];
      for (const entries of hostile) {
        await expectCode(
          sandbox.files.importWorkspace(Readable.from(await buildArchive(entries))),
          "INVALID_ARCHIVE",
        );
      }
      expect(Buffer.from(await sandbox.files.read("precious.txt")).toString()).toBe("keep me");
      await expectCode(sandbox.files.read("ok.txt"), "FILE_NOT_FOUND");
    });

    test("desktops: observe is a PNG, unchanged frames hash equal, typing changes the frame", async () => {
      const { sandbox } = await machine();
      const desktop = sandbox.desktop;
      expect(desktop, "provider declares desktop capability").toBeDefined();
      if (!desktop) return;
      const started = await desktop.observe("bot_contract_a");
      expect(Buffer.from(started.png).subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
      expect(started.width).toBeGreaterThan(0);
      expect(started.height).toBeGreaterThan(0);
      // A real browser paints for a moment after it starts; once the screen settles, two
      // observations of it hash equal (a hash of anything but the pixels would never settle).
      const first = await settledFrame(desktop, "bot_contract_a");
      // Up to 3 tries: on a desktop that has just started, the first keystrokes can arrive before
      // Chromium's window takes input and leave the frame as it was (two fresh-clone CI runs showed
      // the unchanged frame on one provider each, different ones, and never twice in a row). Each
      // try is a real act; the test still fails if typing never changes the frame.
      let after = first;
      for (let attempt = 1; attempt <= 3 && after.frameHash === first.frameHash; attempt++) {
        const acted = await desktop.act("bot_contract_a", [
          // Focus something that shows typed text on every desktop (a browser's address bar).
          { type: "key", keys: "ctrl+l" },
          { type: "type", text: "hello rakazo" },
        ]);
        expect(acted).toEqual({ completed: 2, total: 2 });
        // Let the screen settle; then the frame must have changed.
        after = await settledFrame(desktop, "bot_contract_a");
        if (after.frameHash === first.frameHash)
          console.warn(`typing left the frame unchanged (try ${attempt})`);
      }
      expect(after.frameHash).not.toBe(first.frameHash);
    });

    test("desktops: bots get distinct slots; release frees one", async () => {
      const { sandbox } = await machine();
      const desktop = sandbox.desktop;
      if (!desktop) return;
      const a = await desktop.observe("bot_contract_a");
      const b = await desktop.observe("bot_contract_b");
      expect(a.slot.index).not.toBe(b.slot.index);
      expect((await desktop.list()).map((d) => d.botId).sort()).toEqual(["bot_contract_a", "bot_contract_b"]);
      await desktop.release("bot_contract_a");
      expect((await desktop.list()).map((d) => d.botId)).toEqual(["bot_contract_b"]);
    });

    test("desktops: two bots at once keep their own cookies; a released bot's profile keeps them (CMP-2)", async () => {
      const { sandbox } = await machine();
      const desktop = sandbox.desktop;
      expect(desktop, "provider declares desktop capability").toBeDefined();
      if (!desktop) return;
      await sandbox.files.write(".contract-site/server.cjs", COOKIE_SITE);
      const started = await sandbox.exec({
        argv: ["sh", "-c", "nohup node .contract-site/server.cjs >.contract-site/out.log 2>&1 &"],
      });
      expect(started.exitCode, started.stderr).toBe(0);
      let port = "";
      for (let i = 0; i < 100 && port === ""; i += 1) {
        port = await sandbox.files.read(".contract-site/port").then(
          (bytes) => Buffer.from(bytes).toString(),
          () => "",
        );
        if (port === "") await new Promise((done) => setTimeout(done, 100));
      }
      expect(port, "the site on the computer's loopback started").toMatch(/^\d+$/);

      const visits = () =>
        sandbox.files.read(".contract-site/visits.jsonl").then(
          (bytes) => Buffer.from(bytes).toString(),
          () => "",
        );
      /**
       * Drives the bot's visible browser to the site; the visit's nonce and the Cookie it sent.
       * Typing is tried up to 3 times: under CI's load a bot's second visit sometimes never
       * arrived (3 of 4 fresh-clone runs of 2026-12-02; none in 12 local runs). Every miss typed a
       * URL sharing a prefix with the profile's history, where the omnibox's inline autocomplete
       * races the typing; the cookie is what this test is about. Each miss prints the site's log.
       */
      const visit = async (botId: string): Promise<{ nonce: string; cookie: string }> => {
        const nonce = `${botId}-${randomBytes(4).toString("hex")}`;
        for (let attempt = 1; attempt <= 3; attempt += 1) {
          const acted = await desktop.act(botId, [
            { type: "key", keys: "ctrl+l" },
            { type: "type", text: `http://127.0.0.1:${port}/visit?nonce=${nonce}` },
            // Drops any inline completion the omnibox appended to what was typed.
            { type: "key", keys: "Delete" },
            { type: "key", keys: "Return" },
          ]);
          expect(acted).toEqual({ completed: 4, total: 4 });
          for (let i = 0; i < 50; i += 1) {
            for (const line of (await visits()).split("\n").filter(Boolean)) {
              const entry = JSON.parse(line) as { nonce: string; cookie: string };
              if (entry.nonce === nonce) return { nonce, cookie: entry.cookie };
            }
            await new Promise((done) => setTimeout(done, 200));
          }
          console.warn(
            `contract: ${botId}'s visit ${nonce} not seen (attempt ${attempt}); site log:\n${await visits()}`,
          );
        }
        throw new Error(`the site never saw ${botId}'s visit ${nonce}`);
      };

      const bots = ["bot_cookie_a", "bot_cookie_b"] as const;
      // Two desktops at once, each in its own slot (started one after the other: two cold
      // Chromium starts at the same instant only measure the machine's load).
      const opened = [await desktop.observe(bots[0]), await desktop.observe(bots[1])];
      expect(opened[0]?.slot.index).not.toBe(opened[1]?.slot.index);
      expect((await desktop.list()).map((d) => d.botId).sort()).toEqual([...bots]);
      // Fresh profiles send no cookie; the site sets one per bot.
      const first: string[] = [];
      for (const bot of bots) {
        const visited = await visit(bot);
        expect(visited.cookie).toBe("");
        first.push(visited.nonce);
      }
      // Each bot sends only its own cookie.
      for (const [i, bot] of bots.entries()) expect((await visit(bot)).cookie).toBe(`visitor=${first[i]}`);

      // Released and reopened: the profile, and with it the cookie, was kept.
      await desktop.release(bots[0]);
      expect((await desktop.list()).map((d) => d.botId)).toEqual([bots[1]]);
      await desktop.observe(bots[0]);
      expect((await visit(bots[0])).cookie).toBe(`visitor=${first[0]}`);
      for (const bot of bots) await desktop.release(bot);
    });

    test("screens: view and control tokens of a recycled slot are refused (SCR-2)", async () => {
      const { sandbox, computerId } = await machine();
      const { desktop, screens } = sandbox;
      expect(desktop && screens, "provider wires desktops and a screen gateway").toBeTruthy();
      if (!desktop || !screens) return;
      const keyring = parseScreenKeys(generateScreenKeys("k1"));
      await screens.configure(gatewayKeysFor(keyring, computerId));
      const target = await screens.target();
      const ticketFor = (botId: string, slot: { index: number; generation: number }, policy: ScreenPolicy) =>
        gatewayTicket(
          keyring,
          mintScreenCapability(keyring, {
            computerId,
            botId,
            slot: slot.index,
            generation: slot.generation,
            policy,
            subject: "usr_contract",
            ttlMs: 10 * 60_000,
            now: Date.now(),
          }).claims,
        );

      const first = await desktop.observe("bot_screen_a");
      const old = [
        ticketFor("bot_screen_a", first.slot, "view"),
        ticketFor("bot_screen_a", first.slot, "control"),
      ];
      for (const ticket of old) {
        expect(await screens.check(ticket)).toEqual({ ok: true });
        expect(await gatewayStatus(target, ticket)).toBe(200);
      }
      // Torn down, and another bot takes the same slot (next generation).
      await desktop.release("bot_screen_a");
      const next = await desktop.observe("bot_screen_b");
      expect(next.slot).toEqual({ index: first.slot.index, generation: first.slot.generation + 1 });
      for (const ticket of old) {
        expect(await screens.check(ticket)).toEqual({ ok: false, reason: "slot_gone" });
        expect(await gatewayStatus(target, ticket)).toBe(410);
      }
      // The new bot's own tokens work: the refusal is about the old generation, not the slot.
      for (const policy of ["view", "control"] as const) {
        expect(await gatewayStatus(target, ticketFor("bot_screen_b", next.slot, policy))).toBe(200);
      }
      await desktop.release("bot_screen_b");
    });

    test(CONTRACT_TESTS.terminal[0], async () => {
      const { sandbox, computerId } = await machine();
      const { desktop, screens } = sandbox;
      expect(provider.capabilities.terminal, "provider declares the terminal capability").toBe(true);
      const connect = sandbox.connectTerminal?.bind(sandbox);
      const stop = sandbox.stopTerminal?.bind(sandbox);
      expect(connect && stop, "provider wires connectTerminal and stopTerminal (TRM-7)").toBeTruthy();
      expect(desktop && screens, "provider wires desktops and a screen gateway").toBeTruthy();
      if (!connect || !stop || !desktop || !screens) return;
      const botId = "bot_contract_shell";
      // The bot's folder on a Team Computer (CMP-1), as computer/terminalUrl passes it.
      const folder = `bots/${botId}`;
      await sandbox.files.write(`${folder}/.keep`, "");
      const keyring = parseScreenKeys(generateScreenKeys("k1"));
      await screens.configure(gatewayKeysFor(keyring, computerId));
      const { slot } = await desktop.observe(botId);
      expect(await connect({ botId, slot, cwd: folder })).toEqual({ sessions: 0 });
      const target = await screens.target();
      const ticket = gatewayTicket(
        keyring,
        mintScreenCapability(keyring, {
          computerId,
          botId,
          slot: slot.index,
          generation: slot.generation,
          policy: "terminal",
          subject: "usr_contract",
          ttlMs: 10 * 60_000,
          now: Date.now(),
        }).claims,
      );
      const shells: ContractTerminal[] = [];
      try {
        const probe = async (shell: ContractTerminal, tag: string) => {
          // The typed line echoes back too: only the printed answer has digits after `uid=`.
          shell.type(`printf '${tag}%s uid=%s pid=%s cwd=%s\\n' -ok "$(id -u)" "$$" "$PWD"\r`);
          const [, uid, pid, cwd] = await shell.waitFor(
            new RegExp(`${tag}-ok uid=(\\d+) pid=(\\d+) cwd=(\\S+)`),
          );
          return { uid, pid, cwd };
        };
        shells.push(await openContractTerminal(target, ticket));
        const first = await probe(shells[0] as ContractTerminal, "A");
        // TRM-5: the workspace user, never root: the uid the bot's own commands run as.
        const execUid = (await sandbox.exec({ argv: ["id", "-u"] })).stdout.trim();
        expect(first.uid).toBe(execUid);
        expect(first.uid).not.toBe("0");
        expect(first.cwd).toMatch(new RegExp(`/${folder}$`));
        // A second session (another tab) joins the same server with a shell of its own.
        expect(await connect({ botId, slot, cwd: folder })).toEqual({ sessions: 1 });
        shells.push(await openContractTerminal(target, ticket));
        const second = await probe(shells[1] as ContractTerminal, "B");
        expect(second.uid).toBe(first.uid);
        expect(second.pid).not.toBe(first.pid);
        expect(second.cwd).toBe(first.cwd);

        // TRM-6: stopping (release, expiry, teardown) closes every shell within a second.
        expect(await stop({ botId })).toEqual({ closed: 2 });
        const codes = await Promise.race([
          Promise.all(shells.map((shell) => shell.closed)),
          sleep(1_000).then(() => undefined),
        ]);
        expect(codes, "every shell closed within 1 s of stopTerminal's answer").toEqual([
          CLOSE_TERMINAL_STOPPED,
          CLOSE_TERMINAL_STOPPED,
        ]);
        // The server is gone: the same ticket opens no shell until a new connectTerminal.
        const refused = await openContractTerminal(target, ticket).then(
          (shell) => {
            shells.push(shell);
            return 101;
          },
          (error: { status?: number }) => error.status ?? 0,
        );
        expect(refused).toBe(410);
      } finally {
        for (const shell of shells) shell.close();
        await desktop.release(botId);
      }
    });

    test(CONTRACT_TESTS.processes[0], async () => {
      const { sandbox, ref } = await machine();
      const processes = sandbox.processes;
      expect(processes, "provider wires background commands").toBeDefined();
      if (!processes) return;
      const owner = "external:cmp_contract";
      await sandbox.files.write("jobs/.keep", "");
      const { handle, pid } = await processes.start({
        owner,
        argv: [
          "sh",
          "-c",
          'echo "started in $PWD with $RAKAZO_PROBE"; echo oops >&2; sleep 63 & while true; do echo tick; sleep 0.2; done',
        ],
        cwd: "jobs",
        env: { RAKAZO_PROBE: "probe-42" },
      });
      expect(pid).toBeGreaterThan(0);
      let read = await processes.read({ owner, handle, since: 0, waitMs: 5_000 });
      const seen = [...read.chunks];
      while (!seen.some((c) => c.stream === "stderr") || !seen.some((c) => c.data.includes("tick"))) {
        read = await processes.read({ owner, handle, since: read.next, waitMs: 5_000 });
        seen.push(...read.chunks);
      }
      expect(seen[0]).toMatchObject({ stream: "stdout", offset: 0 });
      expect(seen.map((c) => c.data).join("")).toMatch(/started in \S*\/jobs with probe-42/);
      expect(seen.find((c) => c.stream === "stderr")?.data).toContain("oops");
      expect(read.running).toBe(true);
      // Another provider instance (an API beside a worker, or restarted) reads on from the offset.
      const again = (await options.create()).sandbox(ref).processes;
      const later = await again?.read({ owner, handle, since: read.next, waitMs: 5_000 });
      expect(later?.chunks[0]?.offset).toBe(read.next);
      expect(later?.chunks.map((c) => c.data).join("")).toContain("tick");
      // A handle is found only with the owner that started it.
      await expectCode(processes.read({ owner: "external:cmp_other", handle }), "PROCESS_NOT_FOUND");
      await expectCode(processes.kill({ owner: "external:cmp_other", handle }), "PROCESS_NOT_FOUND");
      expect(await processes.kill({ owner, handle, signal: "SIGKILL" })).toMatchObject({ signalled: true });
      let done = await processes.read({ owner, handle, since: 0, waitMs: 5_000 });
      while (done.running) done = await processes.read({ owner, handle, since: done.next, waitMs: 5_000 });
      expect(done).toMatchObject({ running: false, exitCode: 137, signal: "SIGKILL" });
      // The whole group went: the backgrounded sleep too.
      expect((await sandbox.exec({ argv: ["ps", "-eo", "args"] })).stdout).not.toMatch(/sleep 63/);
    });
  });
}
