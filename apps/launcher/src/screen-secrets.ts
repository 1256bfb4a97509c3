/**
 * The screen service's two secrets for a zero-configuration start: the token the web service
 * presents to the API's screen authority, and the capability keyring. Configured values win;
 * otherwise they are generated once into `DATA_DIR/screen-secrets.json` (mode 0600) so URLs
 * handed out before a restart stay valid after it.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateScreenKeys } from "@rakazo/screens";

export interface ScreenSecrets {
  readonly serviceToken: string;
  readonly capabilityKeys: string;
}

export async function screenSecrets(
  dataDir: string,
  configured: { serviceToken?: string | undefined; capabilityKeys?: string | undefined },
): Promise<ScreenSecrets> {
  const file = join(dataDir, "screen-secrets.json");
  let stored: Partial<ScreenSecrets> = {};
  if (existsSync(file)) stored = JSON.parse(await readFile(file, "utf8")) as Partial<ScreenSecrets>;
  const secrets: ScreenSecrets = {
    serviceToken: configured.serviceToken ?? stored.serviceToken ?? randomBytes(32).toString("base64url"),
    capabilityKeys: configured.capabilityKeys ?? stored.capabilityKeys ?? generateScreenKeys(),
  };
  if (stored.serviceToken !== secrets.serviceToken || stored.capabilityKeys !== secrets.capabilityKeys) {
    if (!configured.serviceToken || !configured.capabilityKeys) {
      await writeFile(file, JSON.stringify(secrets), { mode: 0o600 });
    }
  }
  return secrets;
}
