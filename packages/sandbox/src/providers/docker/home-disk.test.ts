import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createProvider } from "../../registry.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("home disks at start-up", () => {
  it("only a process that repairs deletes the disks of homes the store removed", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-unit-"));
    dirs.push(dataDir);
    await mkdir(join(dataDir, "disks"));
    // A disk whose home is gone (a crash between releasing the disk and deleting the home),
    // and a disk image that was never finished.
    await writeFile(join(dataDir, "disks", "home_gone.img"), "");
    await writeFile(join(dataDir, "disks", "home_gone.img.new"), "");
    const config = { kind: "docker", image: "rakazo-computer:latest", dataDir, homeDisks: true } as const;

    await createProvider(config, { repairs: false });
    expect((await readdir(join(dataDir, "disks"))).sort()).toEqual(["home_gone.img", "home_gone.img.new"]);

    await createProvider(config);
    expect(await readdir(join(dataDir, "disks"))).toEqual([]);
  }, 30_000);
});
