/**
 * Operator commands, on the same DATA_DIR / DATABASE_URL (environment, then `.env`) as
 * `./rakazo start`: status, stop [--keep-computers], computers [--move-stopped], token create --user <name>, ops list|release|recover, owner [transfer <user>].
 */
import { ConfigError, parseRuntimeEnv } from "@rakazo/config";
import { createLogger } from "@rakazo/log";
import { AppError } from "@rakazo/services";
import { computersCommand } from "./commands/computers.ts";
import { opsCommand } from "./commands/ops.ts";
import { ownerCommand } from "./commands/owner.ts";
import { statusCommand } from "./commands/status.ts";
import { stopCommand } from "./commands/stop.ts";
import { tokenCommand } from "./commands/token.ts";
import { readableLine } from "./console.ts";
import { loadDotEnv } from "./dotenv.ts";
import { StartupError } from "./startup-error.ts";

const [command, ...args] = process.argv.slice(2);
let code = 2;
try {
  loadDotEnv(process.env);
  const env = parseRuntimeEnv(process.env);
  // Diagnostics go to stderr so stdout carries only the answer (a token, a list).
  const log = createLogger({
    level: env.LOG_LEVEL === "debug" ? "debug" : "warn",
    base: { service: "rakazo" },
    write: (line) => process.stderr.write(`${process.stderr.isTTY ? readableLine(line, true) : line}\n`),
  });
  switch (command) {
    case "status":
      code = await statusCommand(env, log);
      break;
    case "stop":
      code = await stopCommand(env, args);
      break;
    case "computers":
      code = await computersCommand(env, log, args);
      break;
    case "ops":
      code = await opsCommand(env, log, args);
      break;
    case "token":
      code = await tokenCommand(env, log, args);
      break;
    case "owner":
      code = await ownerCommand(env, log, args);
      break;
    default:
      process.stderr.write(`rakazo: unknown command ${command ?? ""}\n`);
  }
} catch (error) {
  if (error instanceof StartupError || error instanceof ConfigError || error instanceof AppError) {
    const prefix = error instanceof AppError ? `${error.code}: ` : "";
    process.stderr.write(`rakazo: ${prefix}${error.message}\n`);
    code = 1;
  } else {
    throw error;
  }
}
process.exit(code);
