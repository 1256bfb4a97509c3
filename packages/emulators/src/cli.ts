#!/usr/bin/env node
/**
 * `rakazo-emulator boat|daytona [--image rakazo-computer:latest]`: runs one emulator on
 * loopback for development against the Boat or Daytona adapter (BOAT_API_URL / DAYTONA_API_URL
 * and a key printed at start). Machines are containers of the computer image with
 * `--network none`, labelled `rakazo-emulator.owner=cli-<pid>`; Ctrl-C removes them.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { startBoatEmulator } from "./boat/emulator.ts";
import { startDaytonaEmulator } from "./daytona/emulator.ts";
import { createMachinePool } from "./machines.ts";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { image: { type: "string", default: "rakazo-computer:latest" } },
});
const which = positionals[0];
if (which !== "boat" && which !== "daytona") {
  process.stderr.write("usage: rakazo-emulator boat|daytona [--image <computer image>]\n");
  process.exit(2);
}
const machines = createMachinePool({ image: values.image, emulator: which, owner: `cli-${process.pid}` });
const apiKey = `${which}_${randomBytes(16).toString("hex")}`;
const emulator =
  which === "boat"
    ? await startBoatEmulator({ machines, apiKey, sweepEveryMs: 5_000 })
    : await startDaytonaEmulator({ machines, apiKey });
const url = "url" in emulator ? emulator.url : emulator.apiUrl;
process.stdout.write(
  `${which} emulator on ${url}\n${which.toUpperCase()}_API_URL=${url}\n${which.toUpperCase()}_API_KEY=${apiKey}\n`,
);
const stop = async () => {
  await emulator.close();
  await machines.removeAll();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
