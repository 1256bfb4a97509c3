/**
 * Daemon configuration from argv and environment, read once by `main.ts` and `cli.ts`.
 * Flags win over environment: `--run-dir` / RAKAZO_RUN_DIR, `--socket`, `--workspace` /
 * RAKAZO_WORKSPACE, `--screen-limit` / SANDBOX_TEAM_SCREEN_LIMIT, `--display-base`,
 * `--debug-port-base`, `--log-dir`, `--gateway-listen` / RAKAZO_GATEWAY_LISTEN (`unix:<path>` or
 * `tcp:<host>:<port>`; default `unix:<runDir>/gateway.sock`, `off` disables the screen gateway).
 * Admission: `--cgroup-root` / RAKAZO_CGROUP_ROOT (default /sys/fs/cgroup, `off` = cap
 * only), RAKAZO_DESKTOP_MEMORY_MIB / RAKAZO_DESKTOP_PIDS (charged per new desktop),
 * RAKAZO_DESKTOP_FLOOR_MEMORY_MIB / RAKAZO_DESKTOP_FLOOR_PIDS (always kept free),
 * RAKAZO_DESKTOP_CPU_PRESSURE_MAX (cpu.pressure some avg10 %, 0 = ignore).
 * Network: RAKAZO_BROWSER_PROXY (every bot's Chromium `--proxy-server`),
 * RAKAZO_EGRESS_LISTEN + RAKAZO_EGRESS_SOCKET (the loopback relay to the egress proxy).
 */
import os from "node:os";
import path from "node:path";
import {
  type AdmissionPolicy,
  DEFAULT_ADMISSION_POLICY,
  parseCount,
  parseMiB,
} from "../desktops/admission.ts";
import { parseScreenLimit } from "../desktops/slot-table.ts";
import { DEFAULT_LAYOUT } from "../desktops/stack-argv.ts";

export interface SupervisorConfig {
  readonly runDir: string;
  readonly socket: string;
  readonly workspace: string;
  readonly screenLimit: number;
  readonly displayBase: number;
  readonly debugPortBase: number;
  readonly logDir: string;
  /** Where the screen gateway listens (SCR-1); "off" runs none. */
  readonly gatewayListen: string;
  /** Where the computer's cgroup is mounted; "off" admits on the cap alone. */
  readonly cgroupRoot: string;
  readonly admission: AdmissionPolicy;
  /** Every bot's Chromium proxy under egress/allowlist; absent under `none`. */
  readonly browserProxy?: string;
  /** The loopback relay to the egress proxy's socket; absent under `none`. */
  readonly egressRelay?: { readonly listen: string; readonly socket: string };
}

const DEFAULT_RUN_DIR = "/run/rakazo";
const DEFAULT_WORKSPACE = "/home/user/rakazo-home";

/** Splits `--name value` / `--name=value` flags from positional arguments. */
export function parseFlags(argv: readonly string[]): { flags: Map<string, string>; positional: string[] } {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    else {
      flags.set(arg.slice(2), argv[i + 1] ?? "");
      i += 1;
    }
  }
  return { flags, positional };
}

function integer(raw: string | undefined, fallback: number): number {
  const value = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(value) && value >= 0 ? value : fallback;
}

export function resolveConfig(flags: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): SupervisorConfig {
  const runDir = flags.get("run-dir") ?? env.RAKAZO_RUN_DIR ?? DEFAULT_RUN_DIR;
  return {
    runDir,
    socket: flags.get("socket") ?? path.join(runDir, "supervisor.sock"),
    workspace: flags.get("workspace") ?? env.RAKAZO_WORKSPACE ?? DEFAULT_WORKSPACE,
    screenLimit: parseScreenLimit(flags.get("screen-limit") ?? env.SANDBOX_TEAM_SCREEN_LIMIT),
    displayBase: integer(flags.get("display-base"), DEFAULT_LAYOUT.displayBase),
    debugPortBase: integer(flags.get("debug-port-base"), DEFAULT_LAYOUT.debugPortBase),
    logDir: flags.get("log-dir") ?? path.join(os.tmpdir(), "rakazo-supervisor-logs"),
    gatewayListen:
      flags.get("gateway-listen") ?? env.RAKAZO_GATEWAY_LISTEN ?? `unix:${path.join(runDir, "gateway.sock")}`,
    cgroupRoot: flags.get("cgroup-root") ?? env.RAKAZO_CGROUP_ROOT ?? "/sys/fs/cgroup",
    admission: resolveAdmission(env),
    ...(env.RAKAZO_BROWSER_PROXY ? { browserProxy: env.RAKAZO_BROWSER_PROXY } : {}),
    ...(env.RAKAZO_EGRESS_LISTEN && env.RAKAZO_EGRESS_SOCKET
      ? { egressRelay: { listen: env.RAKAZO_EGRESS_LISTEN, socket: env.RAKAZO_EGRESS_SOCKET } }
      : {}),
  };
}

function resolveAdmission(env: NodeJS.ProcessEnv): AdmissionPolicy {
  const base = DEFAULT_ADMISSION_POLICY;
  return {
    desktop: {
      memoryBytes: parseMiB(env.RAKAZO_DESKTOP_MEMORY_MIB, base.desktop.memoryBytes),
      pids: parseCount(env.RAKAZO_DESKTOP_PIDS, base.desktop.pids),
    },
    floor: {
      memoryBytes: parseMiB(env.RAKAZO_DESKTOP_FLOOR_MEMORY_MIB, base.floor.memoryBytes),
      pids: parseCount(env.RAKAZO_DESKTOP_FLOOR_PIDS, base.floor.pids),
    },
    cpuPressureMax: parseCount(env.RAKAZO_DESKTOP_CPU_PRESSURE_MAX, base.cpuPressureMax),
  };
}

/** The flags that reproduce `config` for a daemon started by the CLI. */
export function configFlags(config: SupervisorConfig): string[] {
  return [
    `--run-dir=${config.runDir}`,
    `--socket=${config.socket}`,
    `--workspace=${config.workspace}`,
    `--screen-limit=${config.screenLimit}`,
    `--display-base=${config.displayBase}`,
    `--debug-port-base=${config.debugPortBase}`,
    `--log-dir=${config.logDir}`,
    `--gateway-listen=${config.gatewayListen}`,
    `--cgroup-root=${config.cgroupRoot}`,
  ];
}
