#!/usr/bin/env node
/**
 * Runs a local emulator of a cloud sandbox service until interrupted, for development, CI and
 * self-hosters who want the cloud adapters without the cloud:
 *
 *   node packages/emulators/src/cli.ts e2b|novita [--port 0] [--host 127.0.0.1] [--image IMAGE]
 *   node packages/emulators/src/cli.ts boat|daytona [--image IMAGE]
 *
 * The API key the client must send is read from E2B_API_KEY / NOVITA_API_KEY / BOAT_API_KEY /
 * DAYTONA_API_KEY (generated and printed when unset). Prints the environment that points
 * Rakazo's adapter (and any unmodified SDK) at it. Sandboxes are Docker containers of the image
 * with no network; all are removed on exit.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { startBoatEmulator } from "./boat/emulator.ts";
import { startDaytonaEmulator } from "./daytona/emulator.ts";
import { type Flavor, startE2BEmulator } from "./e2b/emulator.ts";
import { createMachinePool } from "./machines.ts";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    image: { type: "string", default: process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest" },
  },
});
const which = positionals[0];
const KEY_VARS = {
  e2b: "E2B_API_KEY",
  novita: "NOVITA_API_KEY",
  boat: "BOAT_API_KEY",
  daytona: "DAYTONA_API_KEY",
};
if (which !== "e2b" && which !== "novita" && which !== "boat" && which !== "daytona") {
  console.error("usage: cli.ts e2b|novita|boat|daytona [--port N] [--host H] [--image IMAGE]");
  process.exit(2);
}
const keyVar = KEY_VARS[which];
const apiKey = process.env[keyVar] ?? `emu_${randomBytes(16).toString("hex")}`;
let env: Record<string, string>;
let close: () => Promise<void>;
if (which === "e2b" || which === "novita") {
  const emulator = await startE2BEmulator({
    flavor: which as Flavor,
    image: values.image,
    apiKey,
    host: values.host,
    port: Number(values.port),
    labels: { "rakazo-emulator.cli": "true" },
  });
  env = { ...emulator.env };
  close = () => emulator.close();
} else {
  const machines = createMachinePool({ image: values.image, emulator: which, owner: `cli-${process.pid}` });
  const emulator =
    which === "boat"
      ? await startBoatEmulator({ machines, apiKey, sweepEveryMs: 5_000 })
      : await startDaytonaEmulator({ machines, apiKey });
  env = {
    [which === "boat" ? "BOAT_API_URL" : "DAYTONA_API_URL"]:
      "url" in emulator ? emulator.url : emulator.apiUrl,
  };
  close = async () => {
    await emulator.close();
    await machines.removeAll();
  };
}
const lines = Object.entries({ ...env, ...(process.env[keyVar] ? {} : { [keyVar]: apiKey }) });
process.stdout.write(`${lines.map(([k, v]) => `${k}=${v}`).join("\n")}\n`);
const stop = () => {
  void close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
