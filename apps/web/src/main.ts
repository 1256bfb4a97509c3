/**
 * The web service process: noVNC pages and the screen proxy (SCR-4..SCR-7). Configuration from
 * the environment, parsed once here; see `.env.example`.
 */
import { parseWebEnv } from "@rakazo/config";
import { hostnamesOf } from "@rakazo/http-edge";
import { createLogger } from "@rakazo/log";
import { createAuthorityClient } from "./authority.ts";
import { startWebServer } from "./server.ts";

const env = parseWebEnv(process.env);
const bracketed = (host: string) => (host.includes(":") ? `[${host}]` : host);
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "web" } });
if (!env.SCREEN_SERVICE_TOKEN) throw new Error("SCREEN_SERVICE_TOKEN is not set (the launcher sets it)");
const apiUrl = env.API_INTERNAL_URL ?? `http://${env.API_HOST}:${env.API_PORT}`;
const web = await startWebServer({
  authority: createAuthorityClient({ apiUrl, serviceToken: env.SCREEN_SERVICE_TOKEN }),
  apiUrl,
  publicUrl: env.WEB_PUBLIC_URL,
  sessionSecret: env.SCREEN_SERVICE_TOKEN,
  // A bind address other than a wildcard is a name browsers use too (e.g. WEB_HOST=10.0.0.5).
  allowedHosts: [...env.RAKAZO_ALLOWED_HOSTS, ...hostnamesOf([`http://${bracketed(env.WEB_HOST)}`])],
  log,
  host: env.WEB_HOST,
  port: env.WEB_PORT,
});
log.info("web.listening", { url: web.url });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info("web.stopping", { signal });
  await web.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
