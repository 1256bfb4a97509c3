/**
 * The Daytona adapter (the real @daytonaio/sdk on the shared remote runtime) against the Daytona emulator,
 * whose machines are real containers of the computer image with `--network none`: the shared
 * provider contract with its desktop tests (PRV-1, CMP-8).
 */
import { createMachinePool, type DaytonaEmulator, startDaytonaEmulator } from "@rakazo/emulators";
import { createDaytonaProvider } from "@rakazo/sandbox/daytona";
import { COMPUTER_IMAGE, requireDocker, runSandboxProviderContract } from "@rakazo/sandbox/testing";
import { afterAll, describe } from "vitest";
import { supervisorBundle } from "./remote-fixture.ts";

const gate = await requireDocker("Daytona adapter on the Daytona emulator");
const machines = createMachinePool({
  image: COMPUTER_IMAGE,
  emulator: "daytona",
  owner: "i15-daytona-contract",
});
let emulator: DaytonaEmulator | undefined;

afterAll(async () => {
  await emulator?.close();
  await machines.removeAll();
}, 120_000);

describe.skipIf(gate.skip)(gate.title, () => {
  runSandboxProviderContract({
    name: "daytona (emulator)",
    timeoutMs: 180_000,
    create: async () => {
      emulator ??= await startDaytonaEmulator({ machines, apiKey: "dtn_contract_key" });
      const bytes = await supervisorBundle();
      return createDaytonaProvider({
        apiKey: "dtn_contract_key",
        apiUrl: emulator.apiUrl,
        supervisorBundle: async () => bytes,
      });
    },
  });
});
