/**
 * `pnpm bench --only terminal` (TRM-4): the browser terminal's costs, measured in one run.
 * - keystroke round trip: one character typed into `cat` and its echo read back, p50 over 300
 *   rounds, through web proxy + gateway + PTY server (a `terminal` capability, the `ws` client a
 *   browser stands for) against the same PTY helper driven directly over its pipes; the added
 *   p50 is the target (< 2 ms).
 * - 20 concurrent shells on one PTY server: the resident memory of their helpers and shells.
 * The gateway runs in this process (as in the computer, where it shares the supervisor's).
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "@rakazo/log";
import {
  gatewayKeysFor,
  gatewayTicket,
  generateScreenKeys,
  mintScreenCapability,
  openScreenCapability,
  parseScreenKeys,
} from "@rakazo/screens";
import { ComputerGateway } from "@rakazo/supervisor/gateway";
import { PTY_HELPER_SOURCE } from "@rakazo/supervisor/pty-helper";
import { openTerminal } from "@rakazo/supervisor/testing/terminal-client";
import type { ScreenAuthority } from "@rakazo/web/authority";
import { startWebServer } from "@rakazo/web/server";
import type { BenchReport } from "./row.ts";

const ROUNDS = 300;
const SHELLS = 20;
const ROOT = process.getuid?.() === 0;

export async function benchTerminal(report: BenchReport): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rkz-bench-term-"));
  chmodSync(dir, 0o755);
  const workspace = path.join(dir, "workspace");
  mkdirSync(workspace);
  chmodSync(workspace, 0o777);
  const keyring = parseScreenKeys(generateScreenKeys("k1"));
  const computerId = "cmp_benchterminal00000";
  const gateway = new ComputerGateway({
    listen: { path: path.join(dir, "gateway.sock") },
    stateDir: dir,
    slotAt: () => ({ index: 0, generation: 1, botId: "bot_bench", state: "running", vncSocket: dir }),
    terminal: ROOT ? { uid: 4242, gid: 4242 } : {},
  });
  await gateway.start();
  gateway.configure({ computerId, keys: [...gatewayKeysFor(keyring, computerId).keys] });
  gateway.terminal.start("bot_bench", { cwd: workspace, env: { HOME: workspace } });
  const authority: ScreenAuthority = {
    async authorize(capability) {
      const opened = openScreenCapability(keyring, capability);
      if (!opened.ok) return { ok: false, reason: "authority_rejected" };
      return {
        ok: true,
        target: { transport: "unix", socketPath: path.join(dir, "gateway.sock") },
        ticket: gatewayTicket(keyring, opened.claims),
        policy: opened.claims.policy,
      };
    },
  };
  const web = await startWebServer({
    authority,
    log: createLogger({ level: "error" }),
    host: "127.0.0.1",
    port: 0,
  });
  const url = () =>
    `${web.url.replace(/^http/, "ws")}/terminals/${
      mintScreenCapability(keyring, {
        computerId,
        botId: "bot_bench",
        slot: 0,
        generation: 1,
        policy: "terminal",
        subject: "usr_bench",
      }).token
    }/pty`;
  try {
    // Through web proxy + gateway + PTY server.
    const client = await openTerminal(url());
    client.type("stty raw -echo; exec cat\n");
    await new Promise((r) => setTimeout(r, 500));
    const proxied: number[] = [];
    for (let i = 0; i < ROUNDS + 20; i++) {
      const since = client.output().length;
      const started = performance.now();
      client.type("x");
      await client.waitFor(/x/, 5000, since);
      if (i >= 20) proxied.push(performance.now() - started);
    }
    client.ws.close();

    // The same helper, directly over its pipes.
    const helper = spawn(
      "python3",
      ["-c", PTY_HELPER_SOURCE, "80", "24", "/bin/sh", "-c", "stty raw -echo; exec cat"],
      {
        stdio: ["pipe", "pipe", "ignore", "pipe"],
      },
    );
    await new Promise((r) => setTimeout(r, 500));
    const direct: number[] = [];
    for (let i = 0; i < ROUNDS + 20; i++) {
      const started = performance.now();
      await new Promise<void>((resolve) => {
        helper.stdout?.once("data", () => resolve());
        helper.stdin?.write("x");
      });
      if (i >= 20) direct.push(performance.now() - started);
    }
    helper.kill("SIGKILL");
    const p50 = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const [viaProxy, viaPipes] = [p50(proxied), p50(direct)];
    report({ name: "terminal keystroke round trip p50, direct PTY", value: viaPipes, unit: "ms" });
    report({
      name: "terminal keystroke round trip p50, proxy + gateway",
      value: viaProxy,
      unit: "ms",
      baseline: viaPipes,
      ratio: viaProxy / viaPipes,
    });
    report({
      name: "terminal keystroke added by proxy + gateway, p50",
      value: viaProxy - viaPipes,
      unit: "ms",
      target: "< 2 ms",
    });

    // 20 shells on one server: resident memory of every helper and shell.
    const shells = await Promise.all(Array.from({ length: SHELLS }, () => openTerminal(url())));
    for (const s of shells) s.type("echo READY\n");
    await Promise.all(shells.map((s) => s.waitFor(/READY\r?\n/, 30_000)));
    const pids = gateway.terminal.sessions("bot_bench").flatMap((s) => (s.pid ? [s.pid] : []));
    const rss = pids.reduce((sum, pid) => sum + treeRss(pid), 0);
    report({
      name: `terminal ${SHELLS} concurrent shells, resident memory`,
      value: rss / 1024 / 1024,
      unit: "MiB",
    });
    report({
      name: "terminal one shell (helper + bash), resident memory",
      value: rss / SHELLS / 1024 / 1024,
      unit: "MiB",
    });
    for (const s of shells) s.ws.close();
  } finally {
    gateway.terminal.stop();
    await web.close();
    await gateway.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** VmRSS of a process and its descendants, in bytes. */
function treeRss(pid: number): number {
  let total = 0;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {}
  }
  const walk = (p: number): void => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, "utf8"));
      total += Number(match?.[1] ?? 0) * 1024;
    } catch {}
    for (const child of children.get(p) ?? []) walk(child);
  };
  walk(pid);
  return total;
}
