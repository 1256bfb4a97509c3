// The deployment's desktop admission settings (RAKAZO_DESKTOP_*, CMP-5) reach the supervisor of
// every computer: parsed by @rakazo/config as a deployment would, handed to the provider, and
// shown by the supervisor's own `health` answer — a Docker computer (container environment)
// and a remote one through the E2B emulator (the install command's environment).
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseWorkerEnv, providerSettings } from "@rakazo/config";
import { type E2BEmulator, startE2BEmulator } from "@rakazo/emulators/e2b";
import { createProvider, type Sandbox, type SandboxProvider, SUPERVISOR_CLI_COMMAND } from "@rakazo/sandbox";
import { createE2BProvider } from "@rakazo/sandbox/e2b-family";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { afterAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { buildSupervisorOverlay } from "../support/supervisor-overlay.ts";
import { requireDocker } from "../support/tools.ts";

const gate = await requireDocker("desktop admission settings reach the computer's supervisor");

const MIB = 1024 ** 2;
/** None of these is the supervisor's default (200/160 per desktop, 160/128 kept free, 0). */
const SETTINGS = {
  RAKAZO_DESKTOP_MEMORY_MIB: "333",
  RAKAZO_DESKTOP_PIDS: "77",
  RAKAZO_DESKTOP_FLOOR_MEMORY_MIB: "99",
  RAKAZO_DESKTOP_FLOOR_PIDS: "55",
  RAKAZO_DESKTOP_CPU_PRESSURE_MAX: "42",
};
const EXPECTED = {
  desktop: { memoryBytes: 333 * MIB, pids: 77 },
  floor: { memoryBytes: 99 * MIB, pids: 55 },
  cpuPressureMax: 42,
};

/** The running daemon's `health`, through its own CLI inside the computer. */
async function health(sandbox: Sandbox, cli: readonly string[]): Promise<Record<string, unknown>> {
  const result = await sandbox.exec({ argv: [...cli, "health", "{}"], timeoutMs: 30_000 });
  expect(result.exitCode, result.stderr).toBe(0);
  const answer = JSON.parse(result.stdout) as { ok: boolean; result?: Record<string, unknown> };
  expect(answer.ok, result.stdout).toBe(true);
  return answer.result ?? {};
}

describe.skipIf(gate.skip)(gate.title, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }, 180_000);

  it("Docker: a computer provisioned from the deployment's settings shows them in health", async () => {
    const overlay = buildSupervisorOverlay(COMPUTER_IMAGE);
    cleanups.push(async () => overlay.remove());
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-admission-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const env = parseWorkerEnv({
      RAKAZO_PROVIDER: "docker",
      RAKAZO_COMPUTER_IMAGE: overlay.image,
      // Homes on the shared filesystem: the temp DATA_DIR goes with one rm (home disks: home-disk-probe.docker.test.ts).
      RAKAZO_DOCKER_HOME_DISKS: "off",
      DATA_DIR: dataDir,
      RAKAZO_COMPUTER_MEMORY_MIB: "1024",
      RAKAZO_COMPUTER_CPUS: "1",
      RAKAZO_COMPUTER_PIDS: "1024",
      ...SETTINGS,
    });
    const settings = providerSettings(env);
    if (settings.kind !== "docker") throw new Error("docker settings expected");
    const provider: SandboxProvider = await createProvider(settings);
    const computerId = `cmp_admit${randomBytes(4).toString("hex")}`;
    const { ref } = await provider.provision({ computerId, mode: "team", homeKey: computerId });
    cleanups.push(() => provider.destroy(ref));
    expect(await health(provider.sandbox(ref), SUPERVISOR_CLI_COMMAND)).toMatchObject({
      admission: EXPECTED,
      desktopEstimate: EXPECTED.desktop,
    });
  }, 180_000);

  it("remote (E2B emulator): the installed supervisor runs with the deployment's settings", async () => {
    const apiKey = `emu_${randomBytes(12).toString("hex")}`;
    const emulator: E2BEmulator = await startE2BEmulator({
      flavor: "e2b",
      image: COMPUTER_IMAGE,
      apiKey,
      labels: { "rakazo-test.suite": "desktop-admission-settings" },
    });
    cleanups.push(() => emulator.close());
    const env = parseWorkerEnv({ RAKAZO_PROVIDER: "e2b", E2B_API_KEY: apiKey, ...SETTINGS });
    const settings = providerSettings(env);
    if (settings.kind !== "e2b") throw new Error("e2b settings expected");
    const text = (await bundleSupervisor()).text;
    const provider = createE2BProvider({
      apiKey,
      apiUrl: emulator.url,
      sandboxUrl: emulator.url,
      domain: emulator.domain,
      portUrlTemplate: emulator.portUrlTemplate,
      supervisorBundle: async () => new Uint8Array(Buffer.from(text)),
      ...(settings.desktopAdmission ? { desktopAdmission: settings.desktopAdmission } : {}),
    });
    const computerId = `cmp_admit${randomBytes(4).toString("hex")}`;
    const { ref } = await provider.provision({ computerId, mode: "team", homeKey: computerId });
    cleanups.push(() => provider.destroy(ref));
    // The daemon was started at provision; this CLI call only asks it.
    const cli = [
      "sh",
      "-c",
      'exec node "$HOME"/.rakazo/supervisor-*.mjs "$@" --run-dir "$HOME/.rakazo/run"',
      "sh",
    ];
    expect(await health(provider.sandbox(ref), cli)).toMatchObject({ admission: EXPECTED });
  }, 240_000);
});
