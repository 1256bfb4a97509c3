#!/usr/bin/env node
/**
 * The command path (CMP-8): `node cli.ts <method> '<json params>' [flags]` calls the daemon over
 * its socket, starting it detached first when it is not running. Prints the JSON answer on
 * stdout; exit 0 when `ok`, 1 when the answer is an error, 2 on usage errors.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { configFlags, parseFlags, resolveConfig } from "./config.ts";
import type { SupervisorAnswer } from "./protocol.ts";
import { callSocket } from "./rpc-call.ts";

const NOT_LISTENING = new Set(["ENOENT", "ECONNREFUSED"]);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<number> {
  const { flags, positional } = parseFlags(process.argv.slice(2));
  const [method, rawParams = "{}"] = positional;
  if (!method) {
    console.error("usage: cli.ts <method> '<json params>'");
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
  const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "main.ts");
  const daemon = spawn(process.execPath, [main, "serve", ...configFlags(config)], {
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

// exitCode, not exit(): stdout must drain a large answer (an observe is ~100 KB of base64).
main().then(
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
