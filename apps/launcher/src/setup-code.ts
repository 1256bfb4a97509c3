/**
 * The one-time setup code of an installation without BOOTSTRAP_TOKEN. Setup from this machine
 * needs nothing; from anywhere else (a browser behind a proxy, another host) it needs this code,
 * so a web page the operator happens to visit cannot claim a fresh system. The code is made
 * once into `DATA_DIR/setup-code` (mode 0600) and kept across restarts until someone sets up;
 * after that setup is refused anyway, so the code opens nothing.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const CODE = /^[A-Za-z0-9_-]{16,200}$/;

export async function setupCode(dataDir: string, configured: string | undefined): Promise<string> {
  if (configured !== undefined) return configured;
  const file = join(dataDir, "setup-code");
  const stored = (await readFile(file, "utf8").catch(() => "")).trim();
  if (CODE.test(stored)) return stored;
  const code = randomBytes(18).toString("base64url");
  await writeFile(file, `${code}\n`, { mode: 0o600 });
  return code;
}
