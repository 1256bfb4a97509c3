/**
 * Tests drive the real launcher (and the real operator CLI) as processes against a temporary
 * DATA_DIR and free loopback ports, the way `./rakazo start` runs it.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("..", import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rakazo-launcher-"));
  // The embedded Postgres runs as the `postgres` user when we are root: it must reach the dir.
  await chmod(dir, 0o755);
  return dir;
}

/** A launcher's environment: nothing of this shell's but PATH and HOME, fake provider. */
export async function launcherEnv(dataDir: string, extra: Record<string, string> = {}) {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/root",
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    WEB_PORT: String(await freePort()),
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    RAKAZO_PROVIDER: "fake",
    ...extra,
  } as Record<string, string>;
}

export interface RunningLauncher {
  readonly process: ChildProcess;
  readonly env: Record<string, string>;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines so far. */
  records(): Record<string, any>[];
  waitFor(predicate: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void>;
  exited: Promise<number | null>;
  /** What a terminal's Ctrl-C does: SIGINT to every process of the foreground group. */
  ctrlC(): void;
}

const spawned: ChildProcess[] = [];

/** For afterAll: stops (in order, SIGTERM) every launcher a test left running, e.g. on a timeout. */
export async function stopLaunchers(): Promise<void> {
  await Promise.all(
    spawned
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map((child) => {
        const exited = new Promise((done) => child.once("exit", done));
        process.kill(child.pid as number, "SIGTERM");
        return Promise.race([exited, new Promise((done) => setTimeout(done, 30_000))]);
      }),
  );
}

export function spawnLauncher(env: Record<string, string>): RunningLauncher {
  // Its own process group, like a shell's foreground job: `ctrlC` signals the whole group.
  const child = spawn(process.execPath, [join(SRC, "main.ts")], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  spawned.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const records = () =>
    out
      .split("\n")
      .filter(Boolean)
      .flatMap((line) => {
        try {
          return [JSON.parse(line)];
        } catch {
          return [];
        }
      });
  return {
    process: child,
    env,
    stdout: () => out,
    stderr: () => err,
    records,
    exited,
    ctrlC: () => process.kill(-(child.pid as number), "SIGINT"),
    async waitFor(predicate, ms, what) {
      const deadline = Date.now() + ms;
      while (!(await predicate())) {
        if (Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`launcher: ${what} did not happen\nstdout:\n${out}\nstderr:\n${err}`);
        }
        await new Promise((done) => setTimeout(done, 200));
      }
    },
  };
}

/** `./rakazo <args>` (the operator CLI) with the launcher's environment. */
export function runCli(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(SRC, "cli.ts"), ...args],
      { env, timeout: 90_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

export async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`)).ok;
  } catch {
    return false;
  }
}

/** Whether any process runs a postgres server on this data dir. */
export function postgresRunning(dataDir: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile("pgrep", ["-f", `postgres -D ${join(dataDir, "postgres")}`], (error) => resolve(!error));
  });
}
