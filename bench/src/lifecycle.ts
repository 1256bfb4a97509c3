/**
 * `pnpm bench --only lifecycle`: a computer's lifecycle through the real API and worker
 * processes (@rakazo/api/main and the worker's main.ts, Docker provider, production settings:
 * info logging, jobs started on NOTIFY), each beside the least the same work costs by hand with
 * the Docker CLI, in the same run:
 * - `computer/create` → running → the first PNG of a bot's desktop (`computer/observe`), against
 *   `docker run` of the same image, the bare commands that start one desktop (desktops.ts) and
 *   one screenshot read out of the container (target ≤ 1.2×);
 * - `computer/stop` until stopped, against a bare save (the home's files tarred out of the
 *   container) and `docker stop` (target ≤ 1.5×);
 * - `computer/start` until running, against `docker start` until the container runs a command
 *   (target ≤ 1.5×).
 * States are read by polling `computer/get` every POLL_MS, which bounds what a poll adds.
 * Rounds alternate between the two paths; the median of ROUNDS counts. Nothing leaves the
 * machine: computers have no network (the default policy) and the bare container runs with
 * `--network none`.
 */
import { type ChildProcess, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { benchTenant, dockerUsable, freePort, start, stop } from "./api.ts";
import { BARE_DESKTOP } from "./desktops.ts";
import type { BenchReport } from "./row.ts";

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_LIFECYCLE_ROUNDS ?? 3);
const POLL_MS = 20;
const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const ROOT = path.join(import.meta.dirname, "../..");

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

type Rpc = (name: string, input: unknown) => Promise<any>;

function rpcClient(port: number, token: string): Rpc {
  return async (name, input) => {
    const response = await fetch(`http://127.0.0.1:${port}/rpc/${name}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(input),
    });
    const body = (await response.json()) as { result?: unknown; error?: unknown };
    if (!response.ok) throw new Error(`${name}: HTTP ${response.status} ${JSON.stringify(body.error)}`);
    return body.result;
  };
}

async function until(rpc: Rpc, computerId: string, state: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const computer = await rpc("computer/get", { computerId });
    if (computer.state === state) return;
    if (computer.state === "failed" || Date.now() > deadline) {
      throw new Error(
        `computer ${computerId} is ${computer.state}, not ${state}: ${computer.lastError ?? ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The bare path: the same image by hand, one desktop, one screenshot; then save+stop, start. */
async function bareRound(): Promise<{ create: number; stop: number; start: number }> {
  const name = `rakazo-bench-bare-${randomBytes(4).toString("hex")}`;
  try {
    const create = await timed(async () => {
      await run("docker", [
        "run",
        "-d",
        "--name",
        name,
        "--network",
        "none",
        "--entrypoint",
        "/usr/bin/tini",
        IMAGE,
        "--",
        "sleep",
        "infinity",
      ]);
      await run("docker", ["exec", name, "bash", "-c", BARE_DESKTOP]);
      const png = await run("docker", ["exec", name, "base64", "-w0", "/tmp/bench-bare.png"], {
        maxBuffer: 64 << 20,
      });
      if (!Buffer.from(png.stdout, "base64").subarray(1, 4).equals(Buffer.from("PNG")))
        throw new Error("no PNG");
    });
    const stopMs = await timed(async () => {
      await run("docker", ["exec", name, "tar", "-C", "/home/user", "-cf", "-", "."], {
        maxBuffer: 1 << 30,
        encoding: "buffer",
      });
      await run("docker", ["stop", "-t", "5", name]);
    });
    const startMs = await timed(async () => {
      await run("docker", ["start", name]);
      await run("docker", ["exec", name, "true"]);
    });
    return { create, stop: stopMs, start: startMs };
  } finally {
    await run("docker", ["rm", "-f", name]).catch(() => {});
  }
}

/** The product path: create → running → first PNG, stop → stopped, start → running; then delete. */
async function apiRound(
  rpc: Rpc,
  tenant: { spaceId: string; botId: string },
): Promise<{ create: number; stop: number; start: number }> {
  let computerId: string | undefined;
  try {
    const create = await timed(async () => {
      computerId = (await rpc("computer/create", { spaceId: tenant.spaceId })).id as string;
      await until(rpc, computerId, "running");
      const frame = await rpc("computer/observe", { computerId, botId: tenant.botId });
      if (!Buffer.from(frame.pngBase64, "base64").subarray(1, 4).equals(Buffer.from("PNG")))
        throw new Error("no PNG");
    });
    const id = computerId as string;
    const stopMs = await timed(async () => {
      await rpc("computer/stop", { computerId: id });
      await until(rpc, id, "stopped");
    });
    const startMs = await timed(async () => {
      await rpc("computer/start", { computerId: id });
      await until(rpc, id, "running");
    });
    return { create, stop: stopMs, start: startMs };
  } finally {
    if (computerId) {
      await rpc("computer/delete", { computerId }).catch(() => {});
      await until(rpc, computerId, "deleted", 60_000).catch(() => {});
    }
  }
}

export async function benchLifecycle(report: BenchReport): Promise<void> {
  if (!dockerUsable()) {
    console.log(`(lifecycle rows left out: no Docker engine or no image ${IMAGE})`);
    return;
  }
  const { databaseUrl, dataDir, tenant, dispose } = await benchTenant("lifecycle", "docker");
  const children: ChildProcess[] = [];
  try {
    const port = await freePort();
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      RAKAZO_PROVIDER: "docker",
      RAKAZO_COMPUTER_IMAGE: IMAGE,
      RAKAZO_MASTER_KEY: randomBytes(32).toString("base64"),
      API_HOST: "127.0.0.1",
      API_PORT: String(port),
      LOG_LEVEL: "info",
    };
    children.push(
      await start([fileURLToPath(import.meta.resolve("@rakazo/api/main"))], env, '"msg":"api.listening"'),
    );
    children.push(await start([path.join(ROOT, "apps/worker/src/main.ts")], env, '"msg":"worker.started"'));
    const rpc = rpcClient(port, tenant.token);

    const api: { create: number; stop: number; start: number }[] = [];
    const bare: { create: number; stop: number; start: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      api.push(await apiRound(rpc, tenant));
      bare.push(await bareRound());
    }
    const rows = [
      [
        "create",
        "computer/create → running → first PNG (vs docker run + bare desktop + screenshot)",
        "≤ 1.2×",
      ],
      ["stop", "computer/stop → stopped (vs bare save + docker stop)", "≤ 1.5×"],
      ["start", "computer/start → running (vs docker start)", "≤ 1.5×"],
    ] as const;
    for (const [key, label, target] of rows) {
      const value = median(api.map((r) => r[key]));
      const baseline = median(bare.map((r) => r[key]));
      report({ name: label, value, unit: "ms", baseline, ratio: value / baseline, target });
    }
  } finally {
    for (const child of children.reverse()) await stop(child);
    await dispose();
  }
}
