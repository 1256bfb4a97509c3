/**
 * The supervisor daemon: `serve [flags]` (see config.ts), started as `node supervisor.mjs serve`
 * in the image or `node main.ts serve` from source. One per computer, guarded by
 * `<runDir>/supervisor.pid`; a second instance exits 0 without touching the first.
 */
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { sampleCgroup } from "./cgroup.ts";
import { parseFlags, resolveConfig, type SupervisorConfig } from "./config.ts";
import { processLauncher } from "./desktop-stack.ts";
import { startEgressRelay } from "./egress-relay.ts";
import { parseGatewayListen, ScreenGateway } from "./screen-gateway.ts";
import { createRpcServer, processesOf } from "./server.ts";
import { Supervisor } from "./supervisor.ts";

/** A live supervisor daemon (bundle or source), not a process that reused its pid. */
function isSupervisor(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return (
      argv.includes("serve") && argv.some((arg) => /(^|\/)(supervisor\.mjs|main\.ts|entry\.ts)$/.test(arg))
    );
  } catch {
    return false;
  }
}

/** Takes the single-instance lock; false when a live supervisor holds it. */
function takeLock(file: string): boolean {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
      if (Number.isInteger(pid) && pid !== process.pid && isSupervisor(pid)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

async function serve(config: SupervisorConfig): Promise<void> {
  mkdirSync(path.join(config.runDir, "vnc"), { recursive: true });
  const lock = path.join(config.runDir, "supervisor.pid");
  if (!takeLock(lock)) {
    console.error(`supervisor: another instance holds ${lock}`);
    return;
  }
  let gateway: ScreenGateway | undefined;
  const supervisor = new Supervisor({
    launcher: processLauncher({
      logDir: config.logDir,
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
    gateway = new ScreenGateway({
      listen: parseGatewayListen(config.gatewayListen),
      stateDir: config.runDir,
      slotAt: (index) => supervisor.slotAt(index),
      // Events only: tickets, keys and socket paths are never logged.
      log: (event) => console.error(JSON.stringify({ time: new Date().toISOString(), ...event })),
    });
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
