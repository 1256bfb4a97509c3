/**
 * The compose `secrets` init service: generates each deployment secret once into its
 * volume and never changes one that exists, so a restart or an upgrade keeps the Postgres
 * password, the master key (PER-5), the screen keys (URLs handed out stay valid) and the
 * bootstrap token. Files are mode 0600, written whole (temp file + rename) so a crash leaves
 * either nothing or the complete secret. Which service mounts which folder decides who can
 * read what: `postgres/` (Postgres, API, worker), `web/` (web, API), `core/` (API, worker),
 * `s3/` (the optional store, API, worker).
 * The server image's entrypoint (infra/docker/server-entrypoint.sh) turns files into variables.
 *
 *   node apps/launcher/src/compose-secrets.ts [DIR]   (DIR default /run/rakazo-secrets)
 */
import { randomBytes } from "node:crypto";
import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateScreenKeys } from "@rakazo/screens";

/** Relative path → generator. URL-safe values: the password goes into DATABASE_URL as is. */
export const COMPOSE_SECRETS: Readonly<Record<string, () => string>> = {
  "postgres/password": () => randomBytes(24).toString("hex"),
  "web/screen-service-token": () => randomBytes(32).toString("base64url"),
  "core/screen-capability-keys": () => generateScreenKeys(),
  "core/master-key": () => randomBytes(32).toString("base64"),
  "core/bootstrap-token": () => randomBytes(24).toString("base64url"),
  "s3/access-key-id": () => `rakazo${randomBytes(8).toString("hex")}`,
  "s3/secret-access-key": () => randomBytes(30).toString("base64url"),
};

/** Creates the missing secrets under `dir`; returns the ones it created (names, not values). */
export async function ensureComposeSecrets(dir: string): Promise<string[]> {
  const created: string[] = [];
  for (const [name, generate] of Object.entries(COMPOSE_SECRETS)) {
    const file = join(dir, name);
    await mkdir(join(file, ".."), { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, generate(), { mode: 0o600, flag: "wx" });
    try {
      // link() refuses an existing target: an existing secret is never replaced, even by a
      // second init racing this one.
      await link(temp, file);
      created.push(name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      await unlink(temp);
    }
  }
  return created;
}

if (import.meta.main) {
  const dir = process.argv[2] ?? "/run/rakazo-secrets";
  const created = await ensureComposeSecrets(dir);
  process.stdout.write(
    `${JSON.stringify({ event: "secrets.ready", dir, created, kept: Object.keys(COMPOSE_SECRETS).length - created.length })}\n`,
  );
}
