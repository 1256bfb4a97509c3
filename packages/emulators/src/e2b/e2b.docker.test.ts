/**
 * The REAL `e2b` SDK (2.51.0) straight against the E2B emulator, without our adapter: the
 * documented pause → `connect()` on the same Sandbox object → run, the calls the emulator does
 * not play refused by name, another user or internet access refused, and a create the caller
 * gave up on leaving no container (listed by the suite's label). Every sandbox is a real
 * `--network none` container of the computer image.
 */
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import Docker from "dockerode";
import { Sandbox } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2BEmulator, startE2BEmulator } from "./emulator.ts";

const gate = await requireDocker("E2B emulator with the real e2b SDK");

const KEY = "e2b_test_key";
const LABEL = { "rakazo-test.suite": `e2b-sdk-${process.pid}` };
const docker = new Docker();

async function labelled(): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [`rakazo-test.suite=${LABEL["rakazo-test.suite"]}`] },
  });
}

describe.skipIf(gate.skip)(gate.title, () => {
  let emulator: E2BEmulator;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string; domain: string };

  beforeAll(async () => {
    emulator = await startE2BEmulator({ image: COMPUTER_IMAGE, apiKey: KEY, labels: LABEL });
    opts = { apiKey: KEY, apiUrl: emulator.url, sandboxUrl: emulator.url, domain: emulator.domain };
  });
  afterAll(async () => {
    await emulator?.close();
    for (const c of await labelled()) await docker.getContainer(c.Id).remove({ force: true });
  });

  it("pause, then connect() on the same object resumes it and its commands and files work", async () => {
    const sbx = await Sandbox.create("desktop", { ...opts, allowInternetAccess: false });
    await sbx.files.write("/home/user/kept.txt", "before pause");
    expect(await Sandbox.pause(sbx.sandboxId, opts)).toBe(true);
    expect((await Sandbox.getInfo(sbx.sandboxId, opts)).state).toBe("paused");
    expect(await sbx.connect()).toBe(sbx);
    const run = await sbx.commands.run("cat /home/user/kept.txt; echo; id -un");
    expect(run).toMatchObject({ exitCode: 0, stdout: "before pause\nuser\n" });
    expect(await sbx.files.read("/home/user/kept.txt")).toBe("before pause");
    // A second handle from the static connect carries the same token: both keep working.
    const other = await Sandbox.connect(sbx.sandboxId, opts);
    expect((await other.commands.run("echo other")).stdout).toBe("other\n");
    expect((await sbx.commands.run("echo first")).stdout).toBe("first\n");
    expect(await sbx.kill()).toBe(true);
  });

  it("refuses what it does not emulate by name: metrics, another user, internet access", async () => {
    const sbx = await Sandbox.create("desktop", { ...opts, allowInternetAccess: false });
    try {
      // Not "sandbox not found": the sandbox exists, metrics are what is missing.
      await expect(sbx.getMetrics()).rejects.toThrow(
        `GET /sandboxes/${sbx.sandboxId}/metrics is not emulated`,
      );
      await expect(sbx.commands.run("id -un", { user: "root" })).rejects.toThrow(
        'user "root" is not emulated',
      );
      await expect(sbx.files.write("/tmp/x", "x", { user: "root" })).rejects.toThrow(
        'user "root" is not emulated',
      );
      await expect(sbx.files.read("/etc/hostname", { user: "root" })).rejects.toThrow(
        'user "root" is not emulated',
      );
      // The machine's own user is what every call runs as, named or not.
      expect((await sbx.commands.run("id -un", { user: "user" })).stdout).toBe("user\n");
    } finally {
      await sbx.kill();
    }
    const before = (await labelled()).length;
    await expect(Sandbox.create("desktop", { ...opts, allowInternetAccess: true })).rejects.toThrow(
      "allow_internet_access: true is not emulated",
    );
    expect((await labelled()).length).toBe(before);
  });

  it("a create the caller gave up on mid-way removes its container", async () => {
    const before = new Set((await labelled()).map((c) => c.Id));
    const made = async () => (await labelled()).filter((c) => !before.has(c.Id));
    const sandboxesBefore = emulator.sandboxes();
    const abort = new AbortController();
    const created = Sandbox.create("desktop", { ...opts, signal: abort.signal }).catch((e: unknown) => e);
    // Give up once the emulator has made the container, before it answers.
    const deadline = Date.now() + 30_000;
    while ((await made()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    expect(await created).toBeInstanceOf(Error);
    let left = await made();
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await made();
    }
    expect(left.map((c) => c.Names)).toEqual([]);
    expect(emulator.sandboxes()).toEqual(sandboxesBefore);
  });
});
