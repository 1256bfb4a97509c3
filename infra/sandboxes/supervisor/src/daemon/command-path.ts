/**
 * The command path (CMP-8): `<method> '<json params>' [flags]` calls the daemon over its socket,
 * starting it detached first when it is not running (`node supervisor.mjs <method> …` in the
 * image, `node cli.ts <method> …` from source). Prints the JSON answer on stdout; exit 0 when
 * `ok`, 1 when the answer is an error, 2 on usage errors.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { jsonLinesLog } from "../log.ts";
import { configFlags, parseFlags, resolveConfig } from "./config.ts";
import type { SupervisorAnswer } from "./protocol.ts";
import { callSocket } from "./rpc-call.ts";

const NOT_LISTENING = new Set(["ENOENT", "ECONNREFUSED"]);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(argv: readonly string[], daemonScript: string): Promise<number> {
  const { flags, positional } = parseFlags(argv);
  const [method, rawParams = "{}"] = positional;
  if (!method) {
    jsonLinesLog()({
      event: "cli.usage",
      message: "usage: supervisor <method> '<json params>' | supervisor serve [flags]",
    });
    return 2;
  }
  let params: unknown;
  try {
    params = JSON.parse(rawParams);
  } catch (error) {
    return print({
      ok: false,
      error: { code: "INVALID_ACTION", message: `params: ${(error as Error).message}` },
    });
  }
  const config = resolveConfig(flags, process.env);
  try {
    return print(await callSocket(config.socket, method, params));
  } catch (error) {
    if (!NOT_LISTENING.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
  }
  mkdirSync(config.runDir, { recursive: true });
  const log = openSync(path.join(config.runDir, "supervisor.log"), "a");
  const daemon = spawn(process.execPath, [daemonScript, "serve", ...configFlags(config)], {
    detached: true,
    stdio: ["ignore", log, log],
    env: process.env,
  });
  daemon.unref();
  closeSync(log);
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return print(await callSocket(config.socket, method, params));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (!NOT_LISTENING.has(code) || Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

function print(answer: SupervisorAnswer): number {
  process.stdout.write(`${JSON.stringify(answer)}\n`);
  return answer.ok ? 0 : 1;
}

/**
 * Runs one call; `daemonScript` is what `node <daemonScript> serve` starts (the bundle itself,
 * or main.ts from source). Sets the exit code rather than exiting: stdout must drain a large
 * answer (an observe is ~100 KB of base64).
 */
export async function runCommandPath(argv: readonly string[], daemonScript: string): Promise<void> {
  await main(argv, daemonScript).then(
    (code) => {
      process.exitCode = code;
    },
    (error: Error) => {
      process.exitCode = print({
        ok: false,
        error: { code: "SANDBOX_PROVIDER_ERROR", message: `supervisor unreachable: ${error.message}` },
      });
    },
  );
}
