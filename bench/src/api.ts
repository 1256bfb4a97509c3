/**
 * `pnpm bench --only api`: the API's own cost. `computer/get` on the real API process
 * (@rakazo/api/main, fake provider, production settings: info logging to stdout, output
 * checked in `log` mode) under 16 concurrent keep-alive connections, against a bare Hono app
 * doing the same token lookup and SELECT with the same driver (api-bare-server.ts), in the same run
 * on the same database. Servers run in their own processes; this process is the load generator.
 * Rounds alternate between the two so drifting machine load hits both; the best round of each
 * counts. Ratio = API ÷ bare (target ≥ 0.5×).
 *
 * The same again with the Docker provider on a RUNNING computer (when a Docker engine and the
 * computer image are there): each `computer/get` then also asks the computer's supervisor for
 * its desktop report through the host-owned socket link (host-sockets.ts). Its baselines are the
 * bare app with the same SELECTs, and the bare app that also makes that one supervisor call over
 * a kept-alive connection — the least a read of a running computer can cost.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { connectDatabase, migrateDatabase } from "@rakazo/db";
import { createProvider, type SandboxProvider } from "@rakazo/sandbox";
import { createUserWithSpace } from "@rakazo/services";
import postgres from "postgres";
import type { BenchReport } from "./row.ts";

const CONCURRENCY = 16;
const ROUND_MS = Number(process.env.BENCH_API_ROUND_MS ?? 4_000);
const ROUNDS = Number(process.env.BENCH_API_ROUNDS ?? 3);
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function start(args: string[], env: NodeJS.ProcessEnv, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let seen = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(ready)) {
        // Keep draining stdout (the API logs every request there) without holding on to it.
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (d: Buffer) => {
      seen += d.toString();
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}: ${seen.slice(-2000)}`)));
  });
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  // SIGTERM first: the API shuts down cleanly (and writes its --cpu-prof profile).
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system) a process has used so far, in ms, from /proc. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

interface Round {
  readonly perSecond: number;
  /** Server CPU per request, µs. */
  readonly cpuUs: number;
}

async function measure(
  server: ChildProcess,
  port: number,
  token: string,
  computerId: string,
): Promise<Round> {
  const pid = server.pid as number;
  const before = cpuMs(pid);
  const { perSecond, requests } = await load(port, token, computerId, ROUND_MS);
  return { perSecond, cpuUs: ((cpuMs(pid) - before) * 1000) / requests };
}

/** Requests per second over `ms` with CONCURRENCY connections each sending one request at a time. */
async function load(
  port: number,
  token: string,
  computerId: string,
  ms: number,
): Promise<{ perSecond: number; requests: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ computerId });
  const headers = {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    authorization: `Bearer ${token}`,
  };
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port, path: "/rpc/computer/get", method: "POST", headers, agent },
        (res) => {
          res.resume();
          res.once("end", () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`computer/get answered ${res.statusCode}`)),
          );
        },
      );
      req.once("error", reject);
      req.end(body);
    });
  // Warm-up (connections open, JIT settles) is not counted.
  for (let i = 0; i < CONCURRENCY * 10; i++) await once();
  let requests = 0;
  const started = Date.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        await once();
        requests++;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  agent.destroy();
  return { perSecond: requests / elapsed, requests };
}

interface Pair {
  /** Row name suffix: which provider and computer state. */
  readonly label: string;
  readonly kind: "fake" | "docker";
  /** Readies the tenant's computer (Docker: a running container) in the API's data dir. */
  readonly setup?: (databaseUrl: string, computerId: string, dataDir: string) => Promise<Ready>;
}

interface Ready {
  /** Host path of the computer's supervisor socket, for the bare app's own supervisor call. */
  readonly supervisorSocket: string;
  readonly teardown: () => Promise<void>;
}

/** A running Docker computer for the tenant's computer row (no network: nothing leaves the machine). */
async function runningDockerComputer(
  databaseUrl: string,
  computerId: string,
  dataDir: string,
): Promise<Ready> {
  const provider: SandboxProvider = await createProvider({ kind: "docker", image: IMAGE, dataDir });
  const { ref } = await provider.provision({ computerId, mode: "team", homeKey: `home_${computerId}` });
  const teardown = () => provider.destroy(ref);
  try {
    // The supervisor listens once a first call has started it; its report proves it answers.
    const desktop = provider.sandbox(ref).desktop;
    if (!desktop?.capacity) throw new Error("the Docker provider offers no desktop report");
    await desktop.capacity();
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await sql`update computers set state = 'running', provider_ref = ${ref} where id = ${computerId}`;
    await sql.end();
    const runDir = path.join(dataDir, "run");
    const [slug] = readdirSync(runDir);
    return { supervisorSocket: path.join(runDir, slug as string, "supervisor.sock"), teardown };
  } catch (error) {
    await teardown();
    throw error;
  }
}

export function dockerUsable(): boolean {
  try {
    execFileSync("docker", ["image", "inspect", IMAGE], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

export async function benchApi(report: BenchReport): Promise<void> {
  await benchPair(report, { label: "", kind: "fake" });
  if (!dockerUsable()) {
    console.log(`(Docker rows left out: no Docker engine or no image ${IMAGE})`);
    return;
  }
  await benchPair(report, {
    label: ", running Docker computer",
    kind: "docker",
    setup: runningDockerComputer,
  });
}

/**
 * A bench's own database (migrated), DATA_DIR and tenant, for the real API and worker processes;
 * `dispose` removes all three.
 */
export async function benchTenant(label: string, providerKind: "fake" | "docker") {
  const name = `rakazo_bench_${label}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `rakazo-bench-${label}-`));
  const dispose = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  };
  try {
    await admin.unsafe(`create database ${name}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    const databaseUrl = url.toString();
    await migrateDatabase(databaseUrl);
    const handle = connectDatabase(databaseUrl, { max: 1 });
    const tenant = await createUserWithSpace(handle.db, {
      userName: "bench",
      spaceName: "bench",
      botName: "bench-bot",
      providerKind,
    });
    await handle.close();
    return { databaseUrl, dataDir, tenant, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function benchPair(report: BenchReport, pair: Pair): Promise<void> {
  const { databaseUrl, dataDir, tenant, dispose } = await benchTenant("api", pair.kind);
  const children: ChildProcess[] = [];
  let ready: Ready | undefined;
  try {
    ready = await pair.setup?.(databaseUrl, tenant.computerId, dataDir);

    const apiPort = await freePort();
    // BENCH_API_CPU_PROF=<dir>: the API writes a V8 CPU profile there (open it in DevTools).
    const profile = process.env.BENCH_API_CPU_PROF
      ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_API_CPU_PROF)}`]
      : [];
    const api = await start(
      [...profile, fileURLToPath(import.meta.resolve("@rakazo/api/main"))],
      {
        PATH: process.env.PATH,
        DATABASE_URL: databaseUrl,
        DATA_DIR: dataDir,
        RAKAZO_PROVIDER: pair.kind,
        RAKAZO_COMPUTER_IMAGE: IMAGE,
        RAKAZO_MASTER_KEY: randomBytes(32).toString("base64"),
        API_HOST: "127.0.0.1",
        API_PORT: String(apiPort),
        LOG_LEVEL: "info",
      },
      '"msg":"api.listening"',
    );
    children.push(api);
    const bareServer = async (supervisorSocket?: string) => {
      const port = await freePort();
      const args = [path.join(import.meta.dirname, "api-bare-server.ts"), databaseUrl, String(port)];
      const child = await start(
        supervisorSocket ? [...args, supervisorSocket] : args,
        { PATH: process.env.PATH },
        "listening",
      );
      children.push(child);
      return { child, port };
    };
    const bare = await bareServer();
    const bareCall = ready ? await bareServer(ready.supervisorSocket) : undefined;

    const apiRounds: Round[] = [];
    const bareRounds: Round[] = [];
    const bareCallRounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      apiRounds.push(await measure(api, apiPort, tenant.token, tenant.computerId));
      bareRounds.push(await measure(bare.child, bare.port, tenant.token, tenant.computerId));
      if (bareCall)
        bareCallRounds.push(await measure(bareCall.child, bareCall.port, tenant.token, tenant.computerId));
    }
    const best = (rounds: Round[]) => Math.max(...rounds.map((r) => r.perSecond));
    const leastCpu = (rounds: Round[]) => Math.min(...rounds.map((r) => r.cpuUs));
    report({
      name: `computer/get${pair.label}, ${CONCURRENCY} connections (vs bare Hono + same SELECTs)`,
      value: best(apiRounds),
      unit: "req/s",
      baseline: best(bareRounds),
      ratio: best(apiRounds) / best(bareRounds),
      target: "≥ 0.5×",
    });
    // Server CPU per request is what the throughput ratio comes down to on a loaded machine,
    // and it does not depend on how busy the rest of the machine is. Ratio = bare ÷ API.
    report({
      name: `computer/get${pair.label} server CPU per request (vs bare Hono)`,
      value: leastCpu(apiRounds),
      unit: "µs",
      baseline: leastCpu(bareRounds),
      ratio: leastCpu(bareRounds) / leastCpu(apiRounds),
      target: "≥ 0.5×",
    });
    if (bareCall) {
      report({
        name: `computer/get${pair.label} (vs bare Hono + same SELECTs + one supervisor call)`,
        value: best(apiRounds),
        unit: "req/s",
        baseline: best(bareCallRounds),
        ratio: best(apiRounds) / best(bareCallRounds),
        target: "≥ 0.5×",
      });
      report({
        name: `computer/get${pair.label} server CPU per request (vs bare Hono + one supervisor call)`,
        value: leastCpu(apiRounds),
        unit: "µs",
        baseline: leastCpu(bareCallRounds),
        ratio: leastCpu(bareCallRounds) / leastCpu(apiRounds),
        target: "≥ 0.5×",
      });
    }
  } finally {
    for (const child of children) await stop(child);
    await ready?.teardown().catch((error: unknown) => console.log(`(teardown: ${(error as Error).message})`));
    await dispose();
  }
}
