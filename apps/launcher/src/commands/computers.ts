/**
 * `./rakazo computers [--json]`: every computer with its state and provider.
 * `./rakazo computers --move-stopped`: hands stopped computers on another provider to the one
 * Rakazo runs on now (the running launcher's, else RAKAZO_PROVIDER resolved like start does).
 */
import { providerSettings, type RuntimeEnv } from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import { buildProvider } from "@rakazo/runtime";
import { listAllComputers, moveStoppedComputers } from "@rakazo/services";
import { dockerReady } from "../docker-probe.ts";
import { alive, readState } from "../state.ts";
import { withDatabase } from "./database.ts";

async function currentProvider(env: RuntimeEnv): Promise<string> {
  const state = readState(env.DATA_DIR);
  if (state && alive(state.pid)) return state.provider;
  if (env.RAKAZO_PROVIDER !== "auto") return env.RAKAZO_PROVIDER;
  return (await dockerReady(env.DOCKER_SOCKET, env.RAKAZO_COMPUTER_IMAGE)).ready ? "docker" : "fake";
}

export async function computersCommand(env: RuntimeEnv, log: Logger, args: string[]): Promise<number> {
  if (args.includes("--move-stopped")) {
    const toKind = await currentProvider(env);
    const outcome = await withDatabase(env, log, (db) =>
      moveStoppedComputers(
        { db, log },
        {
          toKind,
          providerOf: async (kind) => {
            if (kind !== "fake" && kind !== "docker" && kind !== "host") return undefined;
            if (
              kind === "docker" &&
              !(await dockerReady(env.DOCKER_SOCKET, env.RAKAZO_COMPUTER_IMAGE)).ready
            ) {
              return undefined;
            }
            return buildProvider(providerSettings(env, kind), log);
          },
        },
      ),
    );
    for (const m of outcome.moved) process.stdout.write(`moved ${m.id} from ${m.from} to ${toKind}\n`);
    for (const r of outcome.running) {
      process.stdout.write(
        `left ${r.id} on ${r.providerKind} (${r.state}): stop it on ${r.providerKind} first\n`,
      );
    }
    if (outcome.moved.length === 0 && outcome.running.length === 0) {
      process.stdout.write(`every computer is on ${toKind}\n`);
    }
    return 0;
  }
  const list = await withDatabase(env, log, (db) => listAllComputers({ db }));
  if (args.includes("--json")) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  if (list.length === 0) {
    process.stdout.write("no computers\n");
    return 0;
  }
  const rows = [["ID", "NAME", "STATE", "PROVIDER", "MODE", "SPACE"]];
  for (const c of list) rows.push([c.id, c.name, c.state, c.providerKind, c.mode, c.spaceId]);
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  for (const r of rows)
    process.stdout.write(`${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}\n`);
  return 0;
}
