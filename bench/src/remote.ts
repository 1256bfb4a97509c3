/**
 * `pnpm bench --only remote`: the cloud adapters on the shared remote runtime (CMP-8) through
 * their local emulators (packages/emulators; machines are `--network none` containers of the
 * computer image), each beside Docker with the same image measured just before it in the same
 * run (target ≤ 1.2× Docker):
 * - cold first screenshot: provision (create, supervisor install and start) → first desktop →
 *   first PNG;
 * - warm observe p50 of a desktop already up.
 * E2B runs through the real e2b SDK, Daytona through the real @daytonaio/sdk, Boat through our
 * REST client. Novita is not measured: it is the same binding as E2B (providers/e2b-family) on
 * the same emulator with another SDK of the same shape, so its figures are E2B's.
 * Everything made is destroyed at the end.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMachinePool, startBoatEmulator, startDaytonaEmulator } from "@rakazo/emulators";
import { startE2BEmulator } from "@rakazo/emulators/e2b";
import { createProvider, type SandboxProvider } from "@rakazo/sandbox";
import { createBoatProvider } from "@rakazo/sandbox/boat";
import { createDaytonaProvider } from "@rakazo/sandbox/daytona";
import { createE2BProvider } from "@rakazo/sandbox/e2b-family";
import { COMPUTER_IMAGE } from "@rakazo/sandbox/testing";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { measureFirstScreenshot } from "./host.ts";
import type { BenchReport } from "./row.ts";

const WARM_SAMPLES = 40;
const OWNER = `bench-remote-${process.pid}`;
const LABELS = { "rakazo-test.suite": "bench-remote", "rakazo-test.owner": OWNER };

export async function benchRemote(report: BenchReport): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "rakazo-bench-remote-"));
  const text = (await bundleSupervisor()).text;
  const supervisorBundle = async () => new Uint8Array(Buffer.from(text));
  const apiKey = `emu_${randomBytes(12).toString("hex")}`;
  const e2b = await startE2BEmulator({ flavor: "e2b", image: COMPUTER_IMAGE, apiKey, labels: LABELS });
  const machines = (emulator: "boat" | "daytona") =>
    createMachinePool({ image: COMPUTER_IMAGE, emulator, owner: OWNER });
  const boatMachines = machines("boat");
  const daytonaMachines = machines("daytona");
  const boat = await startBoatEmulator({ machines: boatMachines, apiKey });
  const daytona = await startDaytonaEmulator({ machines: daytonaMachines, apiKey });
  const remotes: readonly [string, SandboxProvider][] = [
    [
      "e2b (real SDK → emulator)",
      createE2BProvider({
        apiKey,
        apiUrl: e2b.url,
        sandboxUrl: e2b.url,
        domain: e2b.domain,
        portUrlTemplate: e2b.portUrlTemplate,
        supervisorBundle,
      }),
    ],
    ["boat (our client → emulator)", createBoatProvider({ apiKey, apiUrl: boat.url, supervisorBundle })],
    [
      "daytona (real SDK → emulator)",
      createDaytonaProvider({ apiKey, apiUrl: daytona.apiUrl, supervisorBundle }),
    ],
  ];
  try {
    for (const [name, provider] of remotes) {
      // Docker just before each: the pair sees the same load on a shared machine.
      const docker = await measureFirstScreenshot(
        await createProvider({
          kind: "docker",
          image: COMPUTER_IMAGE,
          dataDir: join(root, name.split(" ")[0] as string),
        }),
      );
      const remote = await measureFirstScreenshot(provider, WARM_SAMPLES);
      report({
        name: `${name}: cold first screenshot (provision → PNG)`,
        value: remote.coldMs,
        unit: "ms",
        baseline: docker.coldMs,
        ratio: remote.coldMs / docker.coldMs,
        target: "≤ 1.2× Docker",
      });
      report({
        name: `${name}: warm observe p50`,
        value: remote.warmP50Ms,
        unit: "ms",
        baseline: docker.warmP50Ms,
        ratio: remote.warmP50Ms / docker.warmP50Ms,
        target: "≤ 1.2× Docker",
      });
    }
  } finally {
    await Promise.allSettled([e2b.close(), boat.close(), daytona.close()]);
    await Promise.allSettled([boatMachines.removeAll(), daytonaMachines.removeAll()]);
    await rm(root, { recursive: true, force: true });
  }
}
