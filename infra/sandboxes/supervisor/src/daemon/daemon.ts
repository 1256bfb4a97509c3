/**
 * The supervisor daemon: `serve [flags]` (see config.ts), started as `node supervisor.mjs serve`
 * in the image or `node main.ts serve` from source. One per computer, guarded by
 * `<runDir>/supervisor.pid`; a second instance exits 0 without touching the first, unless it is
 * the container's main process (then it stands by, see `standBy`).
 */
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sampleCgroup } from "../desktops/cgroup.ts";
import { DesktopSlots } from "../desktops/desktop-slots.ts";
import { processLauncher } from "../desktops/desktop-stack.ts";
import { ComputerGateway, parseGatewayListen } from "../gateway/computer-gateway.ts";
import { issueRpcKey, removeRpcKey } from "../gateway/rpc.ts";
import { startEgressRelay } from "../network/egress-relay.ts";
import { parseFlags, resolveConfig, type SupervisorConfig } from "./config.ts";
import { createRpcServer, processesOf, rpcHandler } from "./rpc-server.ts";

/**
 * A live supervisor daemon (bundle or source), not a process that reused its pid. `/proc/<n>`
 * also answers for thread ids, with the whole process's cmdline: a stale lock from the previous
 * container (the run dir outlives it, and pids in a fresh container repeat) named one of this
 * daemon's own threads, so it took itself for the holder. Only a thread-group leader counts.
 */
export function isSupervisor(pid: number): boolean {
  try {
    const tgid = /^Tgid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (Number(tgid) !== pid) return false;
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return (
      argv.includes("serve") && argv.some((arg) => /(^|\/)(supervisor\.mjs|main\.ts|entry\.ts)$/.test(arg))
    );
  } catch {
    return false;
  }
}

/**
 * Takes the single-instance lock; false when a live supervisor holds it. The pid is written
 * first and linked into place, so a contender never reads a lock file without its pid.
 */
function takeLock(file: string): boolean {
  const mine = `${file}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        linkSync(mine, file);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (lockHolder(file) !== undefined) return false;
        rmSync(file, { force: true });
      }
    }
    return false;
  } finally {
    rmSync(mine, { force: true });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The live supervisor named in the lock file, if any. */
function lockHolder(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isInteger(pid) && pid !== process.pid && isSupervisor(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The container's main process (its parent is PID 1, the image's init) lost the lock to an
 * instance the command path started first, e.g. a host call that came before this one had
 * loaded. Exiting would end the container and every process in it, so it stands by instead:
 * it takes over if the holder dies, and a SIGTERM (`docker stop`) goes on to the holder, whose
 * clean shutdown (browsers closed, CMP-6) this waits for before exiting.
 */
async function standBy(lock: string): Promise<void> {
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const holder = lockHolder(lock);
    if (holder !== undefined) {
      process.kill(holder, "SIGTERM");
      for (const deadline = Date.now() + 20_000; lockHolder(lock) === holder && Date.now() < deadline; ) {
        await sleep(50);
      }
    }
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  console.error(`supervisor: another instance holds ${lock}; standing by as the container's main process`);
  while (stopping || !takeLock(lock)) await sleep(500);
  process.off("SIGTERM", stop);
  process.off("SIGINT", stop);
  console.error("supervisor: the holder is gone; taking over");
}

async function serve(config: SupervisorConfig): Promise<void> {
  mkdirSync(path.join(config.runDir, "vnc"), { recursive: true });
  const lock = path.join(config.runDir, "supervisor.pid");
  if (!takeLock(lock)) {
    if (process.ppid !== 1) {
      console.error(`supervisor: another instance holds ${lock}`);
      return;
    }
    await standBy(lock);
  }
  let gateway: ComputerGateway | undefined;
  const supervisor = new DesktopSlots({
    launcher: processLauncher({
      logDir: config.logDir,
      chromiumConfigDir: path.join(config.runDir, "chromium-config"),
      ...(config.browserProxy ? { browserProxy: config.browserProxy } : {}),
    }),
    workspace: config.workspace,
    layout: { runDir: config.runDir, displayBase: config.displayBase, debugPortBase: config.debugPortBase },
    screenLimit: config.screenLimit,
    ...(config.cgroupRoot === "off" ? {} : { sampleCgroup: () => sampleCgroup(config.cgroupRoot) }),
    admission: config.admission,
    onSlotClosing: (index, generation) => gateway?.closeSlot(index, generation),
  });
  if (config.gatewayListen !== "off") {
    const listen = parseGatewayListen(config.gatewayListen);
    gateway = new ComputerGateway({
      listen,
      stateDir: config.runDir,
      slotAt: (index) => supervisor.slotAt(index),
      // Events only: tickets, keys and socket paths are never logged.
      log: (event) => console.error(JSON.stringify({ time: new Date().toISOString(), ...event })),
    });
    // On TCP (remote computers) the gateway also serves the RPC to the host, behind a key made
    // now: a daemon that restarts rotates it, and the host re-reads it (gateway-rpc.ts).
    if (!("path" in listen)) {
      gateway.serveRpc({ keyHash: issueRpcKey(config.runDir), handle: rpcHandler(supervisor, gateway) });
    }
    await gateway.start();
  }
  if (config.egressRelay) {
    // Issue 16: without it the computer has no way out under egress/allowlist.
    await startEgressRelay(config.egressRelay).catch((error: Error) =>
      console.error(`supervisor: egress relay: ${error.message}`),
    );
  }
  const server = createRpcServer(supervisor, gateway);
  if (existsSync(config.socket)) rmSync(config.socket);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.socket, resolve);
  });
  chmodSync(config.socket, 0o660);
  console.error(`supervisor: pid ${process.pid} listening on ${config.socket}`);

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    server.close();
    // Background commands do not outlive the supervisor (issue 19).
    processesOf(supervisor).killAll();
    await gateway?.close().catch(() => undefined);
    await supervisor.shutdown().catch((error: Error) => console.error(`supervisor: ${error.message}`));
    rmSync(config.socket, { force: true });
    removeRpcKey(config.runDir);
    rmSync(lock, { force: true });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** `serve [flags]`; anything else prints the usage and sets exit code 2. */
export async function runDaemon(argv: readonly string[]): Promise<void> {
  const { flags, positional } = parseFlags(argv);
  if (positional[0] === "serve") {
    await serve(resolveConfig(flags, process.env));
  } else {
    console.error(
      "usage: supervisor serve [--run-dir DIR] [--socket PATH] [--workspace DIR] [--screen-limit N]",
    );
    process.exitCode = 2;
  }
}
