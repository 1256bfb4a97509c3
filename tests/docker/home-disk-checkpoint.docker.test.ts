// A full home still checkpoints, and its files move to another machine: the home on
// its own disk (RAKAZO_DOCKER_HOME_DISKS) is filled to ENOSPC, checkpointed in place by the home
// store, exported through the provider, taken in by a second data dir's store (another host) and
// mounted there on a new disk; deleting the home releases its disk.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalAgentHomeStore } from "@rakazo/homes";
import { createProvider, DOCKER_HOME_GID, DOCKER_HOME_UID, type SandboxProvider } from "@rakazo/sandbox";
import { requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";

const gate = await requireDocker("home disk checkpoint", ["losetup", "mkfs.ext4", "mount", "umount"]);
const root = process.getuid?.() === 0;
const MIB = 1024 ** 2;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
}, 120_000);

async function machine(diskBytes: number): Promise<{ provider: SandboxProvider; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-ckpt-"));
  const provider = await createProvider({
    kind: "docker",
    image: COMPUTER_IMAGE,
    dataDir,
    homeDisks: "on",
    diskBytes,
  });
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  return { provider, dataDir };
}

describe.skipIf(gate.skip || !root)(root ? gate.title : "home disk checkpoint (needs root)", () => {
  it("checkpoints a full home, and its files come back on another machine's new disk", async () => {
    const homeKey = `home_${randomBytes(4).toString("hex")}`;
    const first = await machine(96 * MIB);
    const { ref } = await first.provider.provision({
      computerId: `cmp_a_${homeKey}`,
      mode: "private",
      homeKey,
    });
    cleanups.push(async () => {
      await first.provider.destroy(ref);
      await first.provider.homeDisks?.remove(homeKey);
    });
    const sandbox = first.provider.sandbox(ref);
    const filled = await sandbox.exec({
      argv: [
        "sh",
        "-c",
        "mkdir -p docs && echo keep > docs/note.txt && dd if=/dev/zero of=big bs=1M count=200 2>&1",
      ],
    });
    expect(filled.stdout).toContain("No space left on device");

    const store = new LocalAgentHomeStore({
      dataDir: first.dataDir,
      owner: { uid: DOCKER_HOME_UID, gid: DOCKER_HOME_GID },
    });
    const saved = await store.checkpoint({
      homeKey,
      previousRevision: 0,
      source: { kind: "local-dir" },
      commit: async () => true,
    });
    expect(saved.status).toBe("saved");
    expect(saved.files).toBeGreaterThanOrEqual(2);
    expect(saved.bytes).toBeGreaterThan(70 * MIB);

    // Another host: the archive lands in its plain home folder; its first provision moves it onto a disk.
    const second = await machine(160 * MIB);
    const other = new LocalAgentHomeStore({
      dataDir: second.dataDir,
      owner: { uid: DOCKER_HOME_UID, gid: DOCKER_HOME_GID },
    });
    const moved = await other.checkpoint({
      homeKey,
      previousRevision: 0,
      source: { kind: "archive", archive: await sandbox.files.exportWorkspace() },
      commit: async () => true,
    });
    expect(moved.status).toBe("saved");
    const there = await second.provider.provision({
      computerId: `cmp_b_${homeKey}`,
      mode: "private",
      homeKey,
    });
    cleanups.push(async () => {
      await second.provider.destroy(there.ref);
      await second.provider.homeDisks?.remove(homeKey);
    });
    const read = await second.provider.sandbox(there.ref).exec({
      argv: ["sh", "-c", "cat docs/note.txt; stat -c %s big; df -B1 --output=size . | tail -1"],
    });
    const [note, size, disk] = read.stdout.trim().split("\n");
    expect(note).toBe("keep");
    expect(Number(size)).toBeGreaterThan(70 * MIB);
    expect(Number(disk)).toBeGreaterThan(130 * MIB);
    expect(Number(disk)).toBeLessThanOrEqual(160 * MIB);

    // The home's delete (services/homes/destroy.ts): disk first, then the store's folder.
    await second.provider.destroy(there.ref);
    await second.provider.homeDisks?.remove(homeKey);
    await other.destroy(homeKey);
    expect(await readdir(join(second.dataDir, "disks"))).toEqual([]);
    const loops = execFileSync("losetup", ["-a"], { encoding: "utf8" });
    expect(loops).not.toContain(second.dataDir);
  }, 240_000);
});
