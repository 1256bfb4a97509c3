/**
 * The external surface's background commands (`external/process/*`) on a remote computer: the
 * real API and worker (tests/support/system.ts) on the Boat adapter against the Boat emulator,
 * whose machine is a real `--network none` container of the computer image. The commands run on
 * the supervisor's process manager through the supervisor channel, as on Docker
 * (tests/docker/external-control.docker.test.ts holds the same rules there).
 */
import { randomBytes } from "node:crypto";
import { type BoatEmulator, createMachinePool, startBoatEmulator } from "@rakazo/emulators";
import { createBoatProvider } from "@rakazo/sandbox/boat";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, type TestSystem } from "../support/system.ts";
import { supervisorBundle } from "./remote-fixture.ts";

const gate = await requireDocker("external background commands on a Boat computer");
const API_KEY = `boat_${randomBytes(12).toString("hex")}`;
const EXTERNAL_TOKEN = `ext_${randomBytes(24).toString("hex")}`;

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({
    image: COMPUTER_IMAGE,
    emulator: "boat",
    owner: "h7-external-processes",
  });
  let emulator: BoatEmulator;
  let system: TestSystem;

  beforeAll(async () => {
    emulator = await startBoatEmulator({ machines, apiKey: API_KEY });
    const bytes = await supervisorBundle();
    system = await createTestSystem({
      externalToken: EXTERNAL_TOKEN,
      provider: async () =>
        createBoatProvider({ apiKey: API_KEY, apiUrl: emulator.url, supervisorBundle: async () => bytes }),
    });
    await system.startWorker();
  }, 180_000);

  afterAll(async () => {
    await system?.close();
    await emulator?.close();
    await machines.removeAll();
  }, 120_000);

  const ok = async (name: string, body: unknown) => {
    const res = await system.rpc(name, body, EXTERNAL_TOKEN);
    expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json.result;
  };

  it("starts, streams, reads on from an offset, refuses another computer's handle and kills the group", async () => {
    const made = await ok("external/computer/create", { screen: "h7-processes" });
    expect(made.computer.state).toBe("running");
    const computerId = made.computer.computerId;
    const { handle } = await ok("external/process/start", {
      computerId,
      argv: ["sh", "-c", "echo first; sleep 67 & while true; do echo tick; sleep 0.2; done"],
    });
    const first = await ok("external/process/read", { computerId, handle, since: 0, waitMs: 10_000 });
    expect(first).toMatchObject({ running: true, dropped: 0 });
    expect(first.chunks[0]).toMatchObject({
      stream: "stdout",
      offset: 0,
      data: expect.stringContaining("first"),
    });
    const more = await ok("external/process/read", { computerId, handle, since: first.next, waitMs: 10_000 });
    expect(more.chunks[0]?.offset).toBe(first.next);
    expect(more.chunks.map((c: { data: string }) => c.data).join("")).toContain("tick");

    // Another computer's id with this handle: exactly like a missing process.
    const other = await ok("external/computer/create", { screen: "h7-processes-other" });
    const foreign = await system.rpc(
      "external/process/read",
      { computerId: other.computer.computerId, handle },
      EXTERNAL_TOKEN,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe("NOT_FOUND");

    expect(await ok("external/process/kill", { computerId, handle, signal: "SIGKILL" })).toMatchObject({
      signalled: true,
    });
    let done = await ok("external/process/read", { computerId, handle, since: more.next, waitMs: 10_000 });
    while (done.running) {
      done = await ok("external/process/read", { computerId, handle, since: done.next, waitMs: 10_000 });
    }
    expect(done).toMatchObject({ running: false, exitCode: 137, signal: "SIGKILL" });
    const ps = await ok("external/computer/exec", { computerId, argv: ["ps", "-eo", "args"] });
    expect(ps.stdout).not.toMatch(/sleep 67/);

    await ok("external/computer/destroy", { computerId });
    await ok("external/computer/destroy", { computerId: other.computer.computerId });
  });
});
