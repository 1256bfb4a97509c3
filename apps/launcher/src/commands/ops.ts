/**
 * `./rakazo ops list [--json]`, `./rakazo ops release <id> --workers-stopped`,
 * `./rakazo ops recover <id>`: the operations verbs (OPS-2, OPS-6) from a shell on the server.
 * The shell user acts as the server owner (the installation's first user), through the same
 * verb as `computer/releaseInterrupted`, so the same refusals apply with the same codes.
 * Exit codes: 0 done, 1 refused (the code is printed), 2 usage.
 */
import type { RuntimeEnv } from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import {
  AppError,
  listAllOperations,
  releaseInterruptedOperation,
  requestComputerRecovery,
  serverOwnerId,
} from "@rakazo/services";
import { withDatabase } from "./database.ts";

const USAGE =
  "usage: ./rakazo ops list [--json] | ./rakazo ops release <operation id> --workers-stopped | ./rakazo ops recover <computer or operation id>";

export async function opsCommand(env: RuntimeEnv, log: Logger, args: string[]): Promise<number> {
  const [verb, id, ...rest] = args;
  switch (verb) {
    case "list":
      return list(env, log, args.includes("--json"));
    case "release": {
      if (!id || id.startsWith("--")) return usage();
      const workersStopped = rest.includes("--workers-stopped");
      const released = await withDatabase(env, log, async (db) => {
        const owner = await serverOwnerId({ db });
        if (!owner) throw new AppError("NOT_FOUND", "this installation has no users yet");
        return releaseInterruptedOperation({ db, log }, { userId: owner }, { id, workersStopped });
      });
      process.stdout.write(
        `released ${released.operation.id}; computer ${released.computer.id} is ${released.computer.state}\n` +
          `recover it with: ./rakazo ops recover ${released.computer.id} (work not saved before the interruption may be lost)\n`,
      );
      return 0;
    }
    case "recover": {
      if (!id || id.startsWith("--")) return usage();
      const queued = await withDatabase(env, log, (db) => requestComputerRecovery({ db, log }, { id }));
      process.stdout.write(
        `recovering ${queued.computerId} (operation ${queued.operationId}); the worker starts it from its last saved workspace\n`,
      );
      return 0;
    }
    default:
      return usage();
  }
}

function usage(): number {
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

async function list(env: RuntimeEnv, log: Logger, json: boolean): Promise<number> {
  const operations = await withDatabase(env, log, (db) => listAllOperations({ db }));
  if (json) {
    process.stdout.write(`${JSON.stringify(operations, null, 2)}\n`);
    return 0;
  }
  if (operations.length === 0) {
    process.stdout.write("no active or failed operations\n");
    return 0;
  }
  const rows = [["ID", "COMPUTER", "KIND", "STATUS", "STAGE", "SINCE"]];
  for (const o of operations) rows.push([o.id, o.computerId, o.kind, o.status, o.stage, o.createdAt]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const r of rows)
    process.stdout.write(`${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}\n`);
  return 0;
}
