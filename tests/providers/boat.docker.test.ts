/**
 * The Boat adapter (our REST client on the shared remote runtime) against the Boat emulator,
 * whose machines are real containers of the computer image with `--network none`: the shared
 * provider contract with its desktop tests (PRV-1, CMP-8).
 */
import { type BoatEmulator, createMachinePool, startBoatEmulator } from "@rakazo/emulators";
import { createBoatProvider } from "@rakazo/sandbox/boat";
import { COMPUTER_IMAGE, requireDocker, runSandboxProviderContract } from "@rakazo/sandbox/testing";
import { afterAll, describe } from "vitest";
import { supervisorBundle } from "./remote-fixture.ts";

const gate = await requireDocker("Boat adapter on the Boat emulator");
const machines = createMachinePool({ image: COMPUTER_IMAGE, emulator: "boat", owner: "i15-boat-contract" });
let emulator: BoatEmulator | undefined;

afterAll(async () => {
  await emulator?.close();
  await machines.removeAll();
}, 120_000);

describe.skipIf(gate.skip)(gate.title, () => {
  runSandboxProviderContract({
    name: "boat (emulator)",
    timeoutMs: 180_000,
    create: async () => {
      emulator ??= await startBoatEmulator({ machines, apiKey: "boat_contract_key" });
      const bytes = await supervisorBundle();
      return createBoatProvider({
        apiKey: "boat_contract_key",
        apiUrl: emulator.url,
        supervisorBundle: async () => bytes,
      });
    },
  });
});
