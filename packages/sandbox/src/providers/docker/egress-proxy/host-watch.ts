/**
 * Entry of the host-address watcher container: `node host-watch.ts`. It runs in the host's
 * network namespace (`NetworkMode: host`), opens no socket, and rewrites
 * `$RAKAZO_HOST_ADDRESSES_DIR/addresses.json` whenever the host's addresses change
 * (host-addresses.ts), which every egress proxy reads.
 */
import { watchHostAddresses } from "./host-addresses.ts";

const dir = process.env.RAKAZO_HOST_ADDRESSES_DIR ?? "/run/rakazo-host";
const log = (event: Record<string, unknown>): void =>
  console.error(JSON.stringify({ time: new Date().toISOString(), ...event }));
const watcher = watchHostAddresses({ dir, log });
const stop = (): void => {
  watcher.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
