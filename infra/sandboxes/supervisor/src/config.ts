/**
 * Daemon configuration from argv and environment, read once by `main.ts` and `cli.ts`.
 * Flags win over environment: `--run-dir` / RAKAZO_RUN_DIR, `--socket`, `--workspace` /
 * RAKAZO_WORKSPACE, `--screen-limit` / SANDBOX_TEAM_SCREEN_LIMIT, `--display-base`,
 * `--debug-port-base`, `--log-dir`, `--gateway-listen` / RAKAZO_GATEWAY_LISTEN (`unix:<path>` or
 * `tcp:<host>:<port>`; default `unix:<runDir>/gateway.sock`, `off` disables the screen gateway).
 */
import os from "node:os";
import path from "node:path";
import { parseScreenLimit } from "./slot-table.ts";
import { DEFAULT_LAYOUT } from "./stack-argv.ts";

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
}

export const DEFAULT_RUN_DIR = "/run/rakazo";
export const DEFAULT_WORKSPACE = "/home/user/rakazo-home";

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
  ];
}
