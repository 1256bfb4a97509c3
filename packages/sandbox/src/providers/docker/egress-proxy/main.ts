/**
 * Entry of the per-computer egress proxy container: `node main.ts`. The Docker provider passes
 * the rules in RAKAZO_EGRESS_RULES (JSON of `EgressRules`), the socket path in
 * RAKAZO_EGRESS_SOCKET (a directory mounted read-only into the computer) and the host-address
 * watcher's file in RAKAZO_HOST_ADDRESSES (a directory mounted read-only here, never into the
 * computer).
 */
import { chmodSync, rmSync } from "node:fs";
import { hostAddressFile } from "./host-addresses.ts";
import { createEgressProxy } from "./proxy.ts";
import { parseEgressRules } from "./rules-env.ts";

const socket = process.env.RAKAZO_EGRESS_SOCKET ?? "/run/rakazo-egress/proxy.sock";
const rules = parseEgressRules(process.env.RAKAZO_EGRESS_RULES);
if (rules instanceof Error) {
  console.error(JSON.stringify({ event: "egress.refused_to_start", error: rules.message }));
  process.exit(2);
}
const hostAddresses = process.env.RAKAZO_HOST_ADDRESSES;
const server = createEgressProxy({
  rules,
  ...(hostAddresses ? { hostAddresses: hostAddressFile(hostAddresses) } : {}),
  log: (event) => console.error(JSON.stringify({ time: new Date().toISOString(), ...event })),
});
rmSync(socket, { force: true });
server.listen(socket, () => {
  // The computer's workspace user (another uid) must be able to connect.
  chmodSync(socket, 0o666);
  console.error(JSON.stringify({ event: "egress.listening", mode: rules.mode }));
});
const stop = (): void => {
  server.close();
  rmSync(socket, { force: true });
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
