/**
 * `./rakazo status`: the launcher and its processes (alive or not), their ports (listening or
 * not), the provider, and the computers. Not running, it lists the Docker computers of this
 * DATA_DIR still running without a control plane (`./rakazo stop --keep-computers`, or a
 * launcher that was killed), found by their `rakazo.data-dir` label, and how to stop them.
 * Exit 0 when running and ready, 3 when not running.
 */
import { connect } from "node:net";
import { resolve } from "node:path";
import type { RuntimeEnv } from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import { listDeploymentContainers } from "@rakazo/sandbox/docker";
import { listAllComputers } from "@rakazo/services";
import { alive, readState } from "../state.ts";
import { withDatabase } from "./database.ts";

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const up = (yes: boolean, word = "running") => (yes ? word : `not ${word}`);

export async function statusCommand(env: RuntimeEnv, log: Logger): Promise<number> {
  const state = readState(env.DATA_DIR);
  if (!state || !alive(state.pid)) {
    process.stdout.write(`Rakazo is not running (DATA_DIR ${env.DATA_DIR})\n`);
    const leftovers = state
      ? [...Object.entries(state.children), ["postgres", state.postgres?.pid] as const].filter(([, pid]) =>
          alive(pid as number | undefined),
        )
      : [];
    for (const [name, pid] of leftovers) {
      process.stdout.write(`  left over: ${name} pid ${pid} (./rakazo stop ends it)\n`);
    }
    process.stdout.write(await orphanedComputers(env));
    return 3;
  }
  const lines = [
    `Rakazo is ${state.ready ? "ready" : "starting"} (launcher pid ${state.pid}, since ${state.startedAt})`,
  ];
  lines.push(`  provider  ${state.provider}`);
  for (const name of ["api", "worker", "web"] as const) {
    const pid = state.children[name];
    let detail = `pid ${pid ?? "-"} ${up(alive(pid))}`;
    if (name === "api") detail += `, ${state.api.url} ${up(await listening(state.api.port), "listening")}`;
    if (name === "web") detail += `, ${state.web.url} ${up(await listening(state.web.port), "listening")}`;
    lines.push(`  ${name.padEnd(8)}  ${detail}`);
  }
  if (state.postgres) {
    const { pid, port } = state.postgres;
    lines.push(
      `  postgres  pid ${pid} ${up(alive(pid))}, port ${port} ${up(await listening(port), "listening")} (embedded)`,
    );
  } else {
    lines.push("  postgres  external (DATABASE_URL)");
  }
  try {
    const list = await withDatabase(env, log, (db) => listAllComputers({ db }));
    const byState = new Map<string, number>();
    for (const c of list) {
      const key = `${c.state} on ${c.providerKind}`;
      byState.set(key, (byState.get(key) ?? 0) + 1);
    }
    const summary = [...byState].map(([k, n]) => `${n} ${k}`).join(", ");
    lines.push(`  computers ${list.length === 0 ? "none" : summary} (./rakazo computers lists them)`);
  } catch (error) {
    lines.push(`  computers unknown: ${(error as Error).message}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return state.ready ? 0 : 1;
}

/**
 * The lines for this data dir's computer containers still running with no control plane to
 * stop them (idle shutdown needs the worker). Nothing when no engine answers: without Docker
 * there are no such containers.
 */
async function orphanedComputers(env: RuntimeEnv): Promise<string> {
  const found = await listDeploymentContainers({
    dataDir: env.DATA_DIR,
    socketPath: env.DOCKER_SOCKET,
  }).catch(() => []);
  const running = found.filter((c) => c.role === "computer" && c.state === "running");
  if (running.length === 0) return "";
  const lines = [`  ${running.length} computer(s) still running without a control plane:`];
  for (const c of running)
    lines.push(`    ${c.computerId}  container ${c.containerId.slice(0, 12)} (${c.name})`);
  lines.push(
    "  ./rakazo start, then ./rakazo stop, checkpoints and stops them;",
    `  docker rm -f $(docker ps -q --filter label=rakazo.data-dir=${resolve(env.DATA_DIR)}) ends them, losing what they did since their last checkpoint`,
  );
  return `${lines.join("\n")}\n`;
}
