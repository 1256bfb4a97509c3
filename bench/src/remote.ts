/**
 * `pnpm bench --only remote`: the cloud adapters on the shared remote runtime (CMP-8) through
 * their local emulators (packages/emulators; machines are `--network none` containers of the
 * computer image), each beside Docker with the same image measured just before it in the same
 * run (target ≤ 1.2× Docker):
 * - cold first screenshot: provision (create, supervisor install and start) → first desktop →
 *   first PNG, and its provision part; on the template that carries the supervisor and starts
 *   it at boot (docs/providers.md, what the emulators offer under TEMPLATE), and on a stock
 *   template (upload and start at provision); medians of COLD_ROUNDS;
 * - warm observe p50 of a desktop already up (on the template).
 * E2B runs through the real e2b SDK, Daytona through the real @daytonaio/sdk, Boat through our
 * REST client. Novita is not measured: it is the same binding as E2B (providers/e2b-family) on
 * the same emulator with another SDK of the same shape, so its figures are E2B's.
 * Everything made is destroyed at the end.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  bakeTemplateImage,
  createMachinePool,
  startBoatEmulator,
  startDaytonaEmulator,
} from "@rakazo/emulators";
import { startE2BEmulator } from "@rakazo/emulators/e2b";
import { createProvider, type SandboxProvider } from "@rakazo/sandbox";
import { createBoatProvider } from "@rakazo/sandbox/boat";
import { createDaytonaProvider } from "@rakazo/sandbox/daytona";
import { createE2BProvider } from "@rakazo/sandbox/e2b-family";
import { supervisorBootCommand } from "@rakazo/sandbox/remote";
import { COMPUTER_IMAGE } from "@rakazo/sandbox/testing";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { measureFirstScreenshot } from "./host.ts";
import type { BenchReport } from "./row.ts";

const WARM_SAMPLES = 40;
const COLD_ROUNDS = 3;
type Cold = Awaited<ReturnType<typeof measureFirstScreenshot>>;
const OWNER = `bench-remote-${process.pid}`;
const LABELS = { "rakazo-test.suite": "bench-remote", "rakazo-test.owner": OWNER };
/**
 * The template/snapshot/type each emulator offers as docs/providers.md tells operators to build
 * it: the computer image with this checkout's bundle baked in at IN_IMAGE, starting the daemon at
 * boot with the runtime's default settings on these providers.
 */
const IN_IMAGE = "/opt/rakazo/supervisor.mjs";
const TEMPLATE = "rakazo-computer";
const BOOT = supervisorBootCommand({
  bundlePath: IN_IMAGE,
  runDir: "/home/user/.rakazo/run",
  workspace: "/home/user/rakazo-home",
  gatewayPort: 8790,
  screenLimit: 0,
  admissionEnv: [],
});

export async function benchRemote(report: BenchReport): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "rakazo-bench-remote-"));
  const text = (await bundleSupervisor()).text;
  const supervisorBundle = async () => new Uint8Array(Buffer.from(text));
  const apiKey = `emu_${randomBytes(12).toString("hex")}`;
  const baked = await bakeTemplateImage({
    baseImage: COMPUTER_IMAGE,
    tag: `rakazo-bench-template:${process.pid}`,
    files: { [IN_IMAGE]: new Uint8Array(Buffer.from(text)) },
  });
  const template = { image: baked.image, boot: BOOT };
  /** E2B's template and Daytona's snapshot by name; Boat's machine type (its API has no images). */
  const templates = { [TEMPLATE]: template, default: template };
  const e2b = await startE2BEmulator({
    flavor: "e2b",
    image: COMPUTER_IMAGE,
    apiKey,
    labels: LABELS,
    templates,
  });
  const machines = (emulator: "boat" | "daytona") =>
    createMachinePool({ image: COMPUTER_IMAGE, emulator, owner: OWNER, templates });
  const boatMachines = machines("boat");
  const daytonaMachines = machines("daytona");
  const boat = await startBoatEmulator({ machines: boatMachines, apiKey });
  const daytona = await startDaytonaEmulator({ machines: daytonaMachines, apiKey });
  const e2bOptions = {
    apiKey,
    apiUrl: e2b.url,
    sandboxUrl: e2b.url,
    domain: e2b.domain,
    portUrlTemplate: e2b.portUrlTemplate,
    supervisorBundle,
  };
  /** Each provider on the template that carries the supervisor, and on a stock one. */
  const remotes: readonly [string, SandboxProvider, SandboxProvider][] = [
    [
      "e2b (real SDK → emulator)",
      createE2BProvider({ ...e2bOptions, template: TEMPLATE, supervisorInImage: IN_IMAGE }),
      createE2BProvider(e2bOptions),
    ],
    [
      "boat (our client → emulator)",
      createBoatProvider({
        apiKey,
        apiUrl: boat.url,
        supervisorBundle,
        supervisorInImage: IN_IMAGE,
        type: "default",
      }),
      createBoatProvider({ apiKey, apiUrl: boat.url, supervisorBundle, type: "small" }),
    ],
    [
      "daytona (real SDK → emulator)",
      createDaytonaProvider({
        apiKey,
        apiUrl: daytona.apiUrl,
        supervisorBundle,
        supervisorInImage: IN_IMAGE,
      }),
      createDaytonaProvider({ apiKey, apiUrl: daytona.apiUrl, supervisorBundle, snapshot: "stock" }),
    ],
  ];
  try {
    for (const [name, provider, stock] of remotes) {
      const docker = await createProvider({
        kind: "docker",
        image: COMPUTER_IMAGE,
        dataDir: join(root, name.split(" ")[0] as string),
      });
      // Rounds of Docker, then the template, then stock, in turn: each trio sees the same load
      // on a shared machine; medians, since one cold start is one noisy sample.
      const rounds: { docker: Cold; remote: Cold; stock: Cold }[] = [];
      for (let round = 0; round < COLD_ROUNDS; round += 1) {
        const last = round === COLD_ROUNDS - 1;
        rounds.push({
          docker: await measureFirstScreenshot(docker, last ? WARM_SAMPLES : 0),
          remote: await measureFirstScreenshot(provider, last ? WARM_SAMPLES : 0),
          stock: await measureFirstScreenshot(stock, 0),
        });
      }
      const median = (pick: (r: (typeof rounds)[number]) => number) =>
        rounds.map(pick).sort((a, b) => a - b)[Math.floor(rounds.length / 2)] as number;
      const warm = rounds[rounds.length - 1] as (typeof rounds)[number];
      const row = (label: string, value: number, baseline: number) =>
        report({
          name: `${name}: ${label}`,
          value,
          unit: "ms",
          baseline,
          ratio: value / baseline,
          target: "≤ 1.2× Docker",
        });
      row(
        "cold first screenshot (provision → PNG)",
        median((r) => r.remote.coldMs),
        median((r) => r.docker.coldMs),
      );
      row(
        "provision",
        median((r) => r.remote.provisionMs),
        median((r) => r.docker.provisionMs),
      );
      row(
        "cold first screenshot, stock template",
        median((r) => r.stock.coldMs),
        median((r) => r.docker.coldMs),
      );
      row(
        "provision, stock template",
        median((r) => r.stock.provisionMs),
        median((r) => r.docker.provisionMs),
      );
      row("warm observe p50", warm.remote.warmP50Ms, warm.docker.warmP50Ms);
    }
  } finally {
    await Promise.allSettled([e2b.close(), boat.close(), daytona.close()]);
    await Promise.allSettled([boatMachines.removeAll(), daytonaMachines.removeAll()]);
    await rm(root, { recursive: true, force: true });
    await baked.remove();
  }
}
