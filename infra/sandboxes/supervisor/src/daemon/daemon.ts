/**
 * The supervisor daemon: `serve [flags]` (see config.ts), started as `node supervisor.mjs serve`
 * in the image or `node main.ts serve` from source. One per computer, guarded by
 * `<runDir>/supervisor.pid`; a second instance exits 0 without touching the first, unless it is
 * the container's main process (then it stands by, see `standBy`).
 */
import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { sampleCgroup } from "../desktops/cgroup.ts";
import { DesktopSlots } from "../desktops/desktop-slots.ts";
import { processLauncher } from "../desktops/desktop-stack.ts";
import { ComputerGateway, parseGatewayListen } from "../gateway/computer-gateway.ts";
import { issueRpcKey, removeRpcKey } from "../gateway/rpc.ts";
import { errorMessage, jsonLinesLog, type Log } from "../log.ts";
import { startEgressRelay } from "../network/egress-relay.ts";
import { parseFlags, resolveConfig, type SupervisorConfig } from "./config.ts";
import { createContext } from "./context.ts";
import { standBy, takeLock } from "./lock.ts";
import { createRpcServer, rpcHandler } from "./rpc-server.ts";

async function serve(config: SupervisorConfig, log: Log): Promise<void> {
  mkdirSync(path.join(config.runDir, "vnc"), { recursive: true });
  const lock = path.join(config.runDir, "supervisor.pid");
  if (!takeLock(lock)) {
    if (process.ppid !== 1) {
      log({ event: "daemon.lock.held", message: `another instance holds ${lock}` });
      return;
    }
    await standBy(lock, log);
  }
  const desktops = new DesktopSlots({
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
    log,
  });
  const listen = config.gatewayListen === "off" ? undefined : parseGatewayListen(config.gatewayListen);
  const gateway = listen
    ? new ComputerGateway({
        listen,
        stateDir: config.runDir,
        slotAt: (index) => desktops.slotAt(index),
        serveRfb: (index, generation) => desktops.serveScreen(index, generation),
        log,
      })
    : undefined;
  const context = createContext({ desktops, ...(gateway ? { gateway } : {}), log });
  if (gateway && listen) {
    // On TCP (remote computers) the gateway also serves the RPC to the host, behind a key made
    // now: a daemon that restarts rotates it, and the host re-reads it (gateway/rpc.ts).
    if (!("path" in listen))
      gateway.serveRpc({ keyHash: issueRpcKey(config.runDir), handle: rpcHandler(context) });
    await gateway.start();
  }
  if (config.egressRelay) {
    // Without the relay the computer has no way out under the egress and allowlist policies.
    await startEgressRelay(config.egressRelay).catch((error: Error) =>
      log({ event: "daemon.egress_relay.failed", message: error.message }),
    );
  }
  const server = createRpcServer(context);
  if (existsSync(config.socket)) rmSync(config.socket);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.socket, resolve);
  });
  chmodSync(config.socket, 0o660);
  log({ event: "daemon.listening", pid: process.pid, socket: config.socket });

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    server.close();
    // Background commands do not outlive the supervisor.
    context.processes.killAll();
    await gateway?.close().catch(() => undefined);
    await desktops
      .shutdown()
      .catch((error: unknown) => log({ event: "daemon.shutdown.failed", message: errorMessage(error) }));
    rmSync(config.socket, { force: true });
    removeRpcKey(config.runDir);
    rmSync(lock, { force: true });
    log({ event: "daemon.stopped", pid: process.pid });
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** `serve [flags]`; anything else prints the usage and sets exit code 2. */
export async function runDaemon(argv: readonly string[]): Promise<void> {
  const { flags, positional } = parseFlags(argv);
  if (positional[0] === "serve") {
    await serve(resolveConfig(flags, process.env), jsonLinesLog());
  } else {
    jsonLinesLog()({
      event: "daemon.usage",
      message: "usage: supervisor serve [--run-dir DIR] [--socket PATH] [--workspace DIR] [--screen-limit N]",
    });
    process.exitCode = 2;
  }
}
