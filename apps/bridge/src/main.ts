/**
 * The bridge process: `node apps/bridge/src/main.ts`, configured by the environment
 * and, for its clients, by BRIDGE_TOKENS_FILE (read once, here: packages only parse).
 */
import { readFileSync } from "node:fs";
import { serve } from "@hono/node-server";
import { parseBridgeEnv } from "@rakazo/config";
import { createLogger } from "@rakazo/log";
import { isLoopbackHost } from "./origins.ts";
import { createBridge } from "./server.ts";

const env = parseBridgeEnv(process.env, { readFile: (path) => readFileSync(path, "utf8") });
const log = createLogger({ level: env.LOG_LEVEL, base: { service: "bridge" } });
const bridge = createBridge({
  apiUrl: env.RAKAZO_API_URL,
  externalToken: env.RAKAZO_EXTERNAL_TOKEN,
  clients: env.clients,
  mcp: {
    idleMs: env.BRIDGE_MCP_IDLE_SECONDS * 1_000,
    maxPerClient: env.BRIDGE_MCP_MAX_SESSIONS_PER_CLIENT,
  },
  origins: { allowed: env.BRIDGE_ALLOWED_ORIGINS, loopback: isLoopbackHost(env.BRIDGE_HOST) },
  keyPrefix: env.BRIDGE_KEY_PREFIX,
  log,
});
log.info("bridge.clients", { clients: env.clients.map((client) => client.name) });
const server = serve(
  { fetch: bridge.app.fetch, hostname: env.BRIDGE_HOST, port: env.BRIDGE_PORT },
  (info) => {
    // Tests start the bridge on port 0 and read the port from this line.
    log.info("bridge.listening", { host: env.BRIDGE_HOST, port: info.port });
  },
);

async function shutdown(signal: string): Promise<void> {
  log.info("bridge.stopping", { signal });
  await bridge.close();
  server.close(() => process.exit(0));
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
