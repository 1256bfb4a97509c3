/**
 * The soak (PER-4/OPS-4): the real launcher (API, worker and web as their own processes,
 * Docker provider) on a fresh database, one real Docker computer, `bots` bots acting on it through
 * the API — observe, click, type, exec, each in a loop — and `viewers` real RFB viewers reading
 * the bots' screens through the web proxy and the computer's gateway with view capabilities.
 * Every `sampleMs` it samples the error count and the resident memory of every process: the
 * API, worker and web (by pid) and the computer's Xvfb, Chromium, x11vnc and supervisor
 * (`docker top`). Used by `pnpm soak` (scripts/soak.ts) and, shortened, by
 * tests/ops/soak.docker.test.ts. Errors are counted, never thrown, so a run always ends in figures.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { openRfb } from "@rakazo/bench/rfb-client";
import { viaWebSocketRaw } from "@rakazo/bench/rfb-stream";
import type { BenchRow } from "@rakazo/bench/row";
import { createClient } from "@rakazo/client";
import { createTestDatabase } from "@rakazo/db/testing";
import { createUserWithSpace } from "@rakazo/services";
import { containerRss, hostRssKib, type RssGroups } from "./process-rss.ts";
import { freePort } from "./processes.ts";

const root = join(import.meta.dirname, "../..");
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface SoakOptions {
  readonly bots: number;
  readonly viewers: number;
  readonly durationMs: number;
  readonly sampleMs: number;
  readonly image: string;
  /** Progress lines (never tokens). */
  readonly say?: (line: string) => void;
}

export interface SoakSample {
  /** Milliseconds since the load started. */
  readonly atMs: number;
  readonly errors: number;
  /** KiB by process group: api, worker, web, and the computer's. */
  readonly rss: RssGroups;
}

export interface SoakResult {
  readonly samples: SoakSample[];
  /** Error kinds and counts, with the first message of each kind. */
  readonly errors: Record<string, { count: number; first: string }>;
  readonly operations: { observe: number; act: number; exec: number; updates: number };
  /** What went wrong before the load started (a desktop retried on a loaded machine): not counted. */
  readonly setupErrors: Record<string, { count: number; first: string }>;
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const began = Date.now();
  const say = (line: string) => options.say?.(`[${((Date.now() - began) / 1000).toFixed(0)} s] ${line}`);
  let errors: SoakResult["errors"] = {};
  const fail = (kind: string, error: unknown) => {
    const entry = errors[kind] ?? { count: 0, first: String((error as Error)?.message ?? error) };
    entry.count += 1;
    errors[kind] = entry;
  };
  const setupErrors: SoakResult["errors"] = {};
  const errorCount = () => Object.values(errors).reduce((n, e) => n + e.count, 0);
  const operations = { observe: 0, act: 0, exec: 0, updates: 0 };
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-soak-"));
  await chmod(dataDir, 0o755);
  const [apiPort, webPort] = [await freePort(), await freePort()];
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  let launcher: ChildProcess | undefined;
  let computerId = "";
  let stopping = false;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((done) => (stop = done));
  const loops: Promise<void>[] = [];
  try {
    launcher = spawn(process.execPath, [join(root, "apps/launcher/src/main.ts")], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/root",
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        API_PORT: String(apiPort),
        WEB_PORT: String(webPort),
        RAKAZO_PROVIDER: "docker",
        RAKAZO_COMPUTER_IMAGE: options.image,
        // Homes on the shared filesystem: the temp DATA_DIR goes with one rm (home disks: home-disk-probe.docker.test.ts).
        RAKAZO_DOCKER_HOME_DISKS: "off",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Every error-level line of any of the three processes (they log through the launcher).
    let partial = "";
    launcher.stdout?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (/"level":"(error|fatal)"/.test(line)) fail("log.error", line.slice(0, 400));
        else if (/"msg":"screen\.proxy\.(target_rejected|websocket_handshake_failed)"/.test(line))
          say(line.slice(0, 400));
      }
    });
    launcher.stderr?.on("data", (chunk: Buffer) => say(`launcher stderr: ${chunk.toString().trim()}`));
    launcher.once("exit", (code) => {
      if (!stopping) fail("launcher.exited", `launcher exited ${code}`);
    });
    const state = await waitForReady(dataDir, launcher);
    say(
      `launcher ready: api ${state.children.api}, worker ${state.children.worker}, web ${state.children.web}`,
    );

    const tenant = await createUserWithSpace(database.db, {
      userName: "soak",
      spaceName: "soak's space",
      botName: "soak-bot-0",
      providerKind: "docker",
    });
    const c = createClient({ baseUrl: apiUrl, token: tenant.token });
    const botIds = [tenant.botId];
    for (let i = 1; i < options.bots; i += 1)
      botIds.push((await c.call("bot/create", { spaceId: tenant.spaceId, name: `soak-bot-${i}` })).id);
    computerId = (await c.call("computer/list", { spaceId: tenant.spaceId }))[0]?.id ?? "";
    await c.call("computer/start", { computerId });
    await until(async () => (await c.call("computer/get", { computerId }))?.state === "running", 180_000);
    const container = (
      await run("docker", ["ps", "-q", "--filter", `label=rakazo.computer=${computerId}`])
    ).stdout.trim();
    if (!container) throw new Error(`no container for ${computerId}`);
    // Each bot's desktop starts on its first observe; the load starts once all are up. Start-up
    // is not the soak: a desktop that did not start in time on a loaded machine is retried
    // (up to 3 attempts); the soak's errors count from the first sample on.
    const retried = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await f();
        } catch (error) {
          if (attempt === 3) throw error;
          say(`${what}, attempt ${attempt}: ${(error as Error).message}`);
          await sleep(5_000);
        }
      }
    };
    for (const botId of botIds)
      await retried(`desktop of ${botId}`, () => c.call("computer/observe", { computerId, botId }));
    say(`computer ${computerId} running with ${botIds.length} desktops`);

    const page = (i: number) =>
      `data:text/html,<body style="margin:0"><input autofocus style="font-size:32px;width:1000px" placeholder="bot ${i}">`;
    for (let v = 0; v < options.viewers; v += 1) {
      const botId = botIds[v % botIds.length] as string;
      const { url } = await c.call("computer/screenUrl", { computerId, botId, policy: "view" });
      const capability = new URL(url).pathname.split("/")[2] ?? "";
      const rfb = await retried(`viewer ${v}`, async () =>
        openRfb(
          await viaWebSocketRaw({
            host: "127.0.0.1",
            port: webPort,
            path: `/screens/${capability}/websockify`,
          }),
        ),
      );
      // As noVNC does: one full frame, then one incremental request outstanding at all times.
      rfb.onUpdate(() => {
        operations.updates += 1;
        if (!stopping) rfb.request(true);
      });
      rfb.request(false);
      loops.push(
        (async () => {
          for (;;) {
            const closed = await Promise.race([
              rfb.nextUpdate().then(() => false),
              stopped.then(() => true),
            ]).catch((error) => {
              if (!stopping) fail("viewer.closed", error);
              return true;
            });
            if (closed) break;
          }
          rfb.close();
        })(),
      );
    }
    loops.push(
      ...botIds.map(async (botId, i) => {
        const call = async (kind: keyof typeof operations, f: () => Promise<unknown>) => {
          try {
            await f();
            operations[kind] += 1;
          } catch (error) {
            fail(`bot.${kind}`, error);
          }
        };
        const key = (keys: string) => ({ type: "key" as const, keys });
        await call("act", () =>
          c.call("computer/act", {
            computerId,
            botId,
            actions: [
              key("ctrl+l"),
              { type: "type", text: page(i) },
              key("Return"),
              { type: "wait", ms: 500 },
            ],
          }),
        );
        for (let round = 0; !stopping; round += 1) {
          await call("observe", () => c.call("computer/observe", { computerId, botId }));
          await call("act", () =>
            c.call("computer/act", {
              computerId,
              botId,
              actions: [
                { type: "click", x: 300, y: 30 },
                { type: "type", text: `round ${round} ` },
                ...(round % 5 === 4 ? [key("ctrl+a"), key("BackSpace")] : []),
              ],
            }),
          );
          await call("exec", () => c.call("computer/exec", { computerId, argv: ["sh", "-c", "echo $$"] }));
          await sleep(1_000);
        }
      }),
    );
    say(`${botIds.length} bots and ${options.viewers} viewers on ${computerId}`);

    const samples: SoakSample[] = [];
    const sample = async (atMs: number) => {
      const rss: RssGroups = {};
      for (const name of ["api", "worker", "web"] as const) {
        const pid = (await readLauncherState(dataDir))?.children[name];
        const kib = pid ? await hostRssKib(pid) : undefined;
        if (kib === undefined) fail("sample.process_gone", `${name} (pid ${pid}) is gone`);
        rss[name] = { kib: kib ?? 0, processes: 1 };
      }
      try {
        Object.assign(rss, await containerRss(container));
      } catch (error) {
        fail("sample.docker_top", error);
      }
      samples.push({ atMs, errors: errorCount(), rss });
      const mib = Object.entries(rss).map(([g, r]) => `${g} ${(r.kib / 1024).toFixed(0)}`);
      say(`t+${(atMs / 1000).toFixed(0)} s: ${errorCount()} errors; RSS MiB ${mib.join(", ")}`);
    };
    // Errors count from here: what setup logged or retried is reported apart.
    Object.assign(setupErrors, errors);
    errors = {};
    const started = Date.now();
    await sample(0);
    while (Date.now() - started < options.durationMs) {
      await sleep(Math.min(options.sampleMs, options.durationMs - (Date.now() - started)));
      await sample(Date.now() - started);
    }
    stopping = true;
    stop();
    await Promise.all(loops);
    return { samples, errors, operations, setupErrors };
  } catch (error) {
    fail("soak.setup", error);
    return { samples: [], errors, operations, setupErrors };
  } finally {
    stopping = true;
    stop();
    await Promise.race([Promise.all(loops), sleep(30_000)]);
    say("tearing down");
    await teardown({ computerId, launcher, dataDir });
    await database.drop();
    say("torn down");
  }
}

interface LauncherState {
  readonly ready: boolean;
  readonly children: Partial<Record<"api" | "worker" | "web", number>>;
}

async function readLauncherState(dataDir: string): Promise<LauncherState | undefined> {
  try {
    return JSON.parse(await readFile(join(dataDir, "launcher.json"), "utf8")) as LauncherState;
  } catch {
    return undefined;
  }
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not done within ${ms / 1000} s`);
    await sleep(500);
  }
}

async function waitForReady(dataDir: string, launcher: ChildProcess): Promise<LauncherState> {
  let state: LauncherState | undefined;
  await until(async () => {
    if (launcher.exitCode !== null) throw new Error(`launcher exited ${launcher.exitCode}`);
    state = await readLauncherState(dataDir);
    return state?.ready === true;
  }, 90_000);
  return state as LauncherState;
}

/**
 * Stops the launcher (API, worker, web), then removes the computer's container by its label and
 * the data dir its bind mounts live in. Not `computer/delete`: its checkpoint is not what a soak
 * measures, and it took minutes on a loaded machine.
 */
async function teardown(parts: {
  computerId: string;
  launcher: ChildProcess | undefined;
  dataDir: string;
}): Promise<void> {
  const { computerId, launcher } = parts;
  if (launcher && launcher.exitCode === null) {
    const exited = new Promise((done) => launcher.once("exit", done));
    launcher.kill("SIGTERM");
    await Promise.race([exited, sleep(30_000)]);
  }
  if (computerId) {
    const { stdout } = await run("docker", ["ps", "-aq", "--filter", `label=rakazo.computer=${computerId}`]);
    const left = stdout.split("\n").filter(Boolean);
    if (left.length > 0) await run("docker", ["rm", "-f", "-v", ...left]).catch(() => undefined);
  }
  await rm(parts.dataDir, { recursive: true, force: true });
}

export interface SoakGrowth {
  readonly group: string;
  readonly firstKib: number;
  readonly lastKib: number;
  /** last ÷ first. */
  readonly ratio: number;
}

/**
 * Memory growth per process group: the last sample against the first one after warm-up (the
 * sample at index `warmupSamples`; the one at 0 is taken as the load starts, before Chromium's
 * pages, V8 heaps and x11vnc's buffers have reached their working size).
 */
export function soakGrowth(result: SoakResult, warmupSamples = 1): SoakGrowth[] {
  const first = result.samples[Math.min(warmupSamples, result.samples.length - 1)];
  const last = result.samples.at(-1);
  if (!first || !last) return [];
  return Object.keys(last.rss)
    .filter((group) => group !== "other" && first.rss[group])
    .map((group) => {
      const firstKib = first.rss[group]?.kib ?? 0;
      const lastKib = last.rss[group]?.kib ?? 0;
      return { group, firstKib, lastKib, ratio: firstKib > 0 ? lastKib / firstKib : Number.NaN };
    });
}

/** The soak's figures as bench rows (tests/support/figures.ts records them for the report). */
export function soakRows(result: SoakResult, growthTarget: string): BenchRow[] {
  const errors = Object.values(result.errors).reduce((n, e) => n + e.count, 0);
  const ops = result.operations;
  return [
    {
      name: "errors (bot calls, viewers, error log lines, processes)",
      value: errors,
      unit: "errors",
      target: "= 0 errors",
    },
    {
      name: "bot operations (observe + act + exec)",
      value: ops.observe + ops.act + ops.exec,
      unit: "calls",
      better: "higher",
    },
    { name: "viewer framebuffer updates", value: ops.updates, unit: "updates", better: "higher" },
    ...soakGrowth(result).map((g) => ({
      name: `RSS ${g.group}: last sample ÷ first after warm-up`,
      value: g.lastKib / 1024,
      unit: "MiB",
      baseline: g.firstKib / 1024,
      ratio: g.ratio,
      target: growthTarget,
    })),
  ];
}
