#!/usr/bin/env node
/**
 * Runs a local emulator of a cloud sandbox service until interrupted, for development, CI and
 * self-hosters who want the cloud adapters without the cloud:
 *
 *   node packages/emulators/src/cli.ts e2b    [--port 0] [--host 127.0.0.1] [--image rakazo-computer:latest]
 *   node packages/emulators/src/cli.ts novita [...]
 *
 * The API key the SDK must send is read from E2B_API_KEY / NOVITA_API_KEY (generated and
 * printed when unset). Prints the environment that points Rakazo's adapter (and any unmodified
 * SDK) at it. Sandboxes are Docker containers of the image with no network; all are removed on
 * exit.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { type Flavor, startE2BEmulator } from "./e2b/emulator.ts";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    image: { type: "string", default: process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest" },
  },
});
const flavor = positionals[0];
if (flavor !== "e2b" && flavor !== "novita") {
  console.error("usage: cli.ts e2b|novita [--port N] [--host H] [--image IMAGE]");
  process.exit(2);
}
const keyVar = flavor === "e2b" ? "E2B_API_KEY" : "NOVITA_API_KEY";
const apiKey = process.env[keyVar] ?? `emu_${randomBytes(16).toString("hex")}`;
const emulator = await startE2BEmulator({
  flavor: flavor as Flavor,
  image: values.image,
  apiKey,
  host: values.host,
  port: Number(values.port),
  labels: { "rakazo-emulator.cli": "true" },
});
const lines = Object.entries({ ...emulator.env, ...(process.env[keyVar] ? {} : { [keyVar]: apiKey }) });
process.stdout.write(`${lines.map(([k, v]) => `${k}=${v}`).join("\n")}\n`);
const stop = () => {
  void emulator.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
