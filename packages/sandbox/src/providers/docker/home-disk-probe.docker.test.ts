/**
 * `RAKAZO_DOCKER_HOME_DISKS=auto|on` against the real engine: the worker's probe passes for a
 * root process in the engine's mount namespace (disks on), and fails, with its reason, for the
 * two situations a self-hoster meets: a process in another mount namespace (what a container
 * whose DATA_DIR bind does not propagate mounts is; simulated with `unshare -m`, which really
 * mounts, only where the engine cannot see it) and a non-root process (the launcher run by a
 * user; simulated by running the probe as `nobody`). There `auto` is off with one warning
 * event and `on` refuses to build the provider.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { isSandboxError } from "../../errors.ts";
import { createProvider } from "../../registry.ts";
import { requireDocker, requireRoot } from "../../testing/tools.ts";
import { probeHomeDisks } from "./home-disk-probe.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const run = promisify(execFile);

const gate = await requireDocker("home disk probe", ["losetup", "mkfs.ext4", "mount", "umount", "unshare"]);
// Mounting needs root: like a missing tool, a skip locally and a failure under CI=true.
const rootGate = gate.skip ? gate : requireRoot("home disk probe");

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "rakazo-disk-probe-"));
  dirs.push(dir);
  return dir;
}

/**
 * The provider's start-up decision in a child process (`prefix` puts it in another mount
 * namespace or makes it another user): what `auto` and `on` each gave, and the events logged.
 */
async function decideInChild(
  prefix: readonly string[],
  dir: string,
  options: { uid?: number } = {},
): Promise<{ auto: boolean; events: Record<string, unknown>[]; on: Record<string, unknown> }> {
  // The child drops to `uid` itself once the probe's modules are loaded: spawned as that user it
  // could not even start when the checkout or its Node lies under a private folder (a fresh
  // clone in a 0700 temp dir: EACCES on the node binary).
  const drop =
    options.uid === undefined ? "" : `process.setgid(${options.uid}); process.setuid(${options.uid});`;
  const probe = pathToFileURL(join(import.meta.dirname, "home-disk-probe.ts")).href;
  const script = `
    const { resolveHomeDisks } = await import(${JSON.stringify(probe)});
    ${drop}
    const events = [];
    const config = { image: ${JSON.stringify(IMAGE)}, dataDir: ${JSON.stringify(dir)} };
    const auto = await resolveHomeDisks({ ...config, homeDisks: "auto" }, { log: (e) => events.push(e) });
    const on = await resolveHomeDisks({ ...config, homeDisks: "on" }, {}).then(
      (value) => ({ value }),
      (error) => ({ code: error.code, message: error.message, details: error.details }),
    );
    process.stdout.write(JSON.stringify({ auto, events, on }));`;
  const { stdout } = await run(
    prefix[0] ?? process.execPath,
    [...prefix.slice(1), ...(prefix.length ? [process.execPath] : []), "--input-type=module", "-e", script],
    { timeout: 60_000 },
  );
  return JSON.parse(stdout);
}

describe.skipIf(rootGate.skip)(rootGate.title, () => {
  it("auto gives disks to a root process in the engine's mount namespace, leaving nothing behind", async () => {
    const dir = await dataDir();
    const probe = await probeHomeDisks({ dataDir: dir, docker: new Docker(), image: IMAGE });
    expect(probe).toMatchObject({ ok: true });

    const events: Record<string, unknown>[] = [];
    const provider = await createProvider(
      { kind: "docker", image: IMAGE, dataDir: dir, homeDisks: "auto" },
      { log: (event) => events.push(event) },
    );
    expect(provider.homeDisks).toBeDefined();
    expect(events.filter((e) => e.event === "docker.home_disks.unavailable")).toEqual([]);
    // The probe's image and mount point are gone (nothing a later settle would have to find).
    expect(await readdir(join(dir, "disks"))).toEqual([]);
  }, 60_000);

  it("in another mount namespace (a container's view of DATA_DIR), auto is off with one warning and on refuses", async () => {
    const dir = await dataDir();
    const decided = await decideInChild(["unshare", "-m", "--propagation", "private"], dir);
    expect(decided.auto).toBe(false);
    expect(decided.events).toEqual([
      expect.objectContaining({
        event: "docker.home_disks.unavailable",
        setting: "RAKAZO_DOCKER_HOME_DISKS=auto",
        reason: "not_visible_to_engine",
      }),
    ]);
    expect(decided.on).toMatchObject({
      code: "SANDBOX_PROVIDER_ERROR",
      details: { reason: "home_disks_unavailable", probe: "not_visible_to_engine" },
    });
    expect(decided.on.message).toMatch(/^RAKAZO_DOCKER_HOME_DISKS=on, but home disks cannot be made here/);
    expect(await readdir(join(dir, "disks"))).toEqual([]);
  }, 120_000);

  it("as a non-root user, auto is off with one warning naming it and on refuses", async () => {
    const dir = await dataDir();
    const decided = await decideInChild([], dir, { uid: 65534 });
    expect(decided.auto).toBe(false);
    expect(decided.events).toEqual([
      expect.objectContaining({ event: "docker.home_disks.unavailable", reason: "not_root" }),
    ]);
    expect(decided.on).toMatchObject({ details: { probe: "not_root" } });
  }, 60_000);

  it("where the engine cannot run the check, auto builds the provider without disks and on does not build it", async () => {
    const dir = await dataDir();
    const config = { kind: "docker", image: "rakazo-no-such-image:missing", dataDir: dir } as const;
    const events: Record<string, unknown>[] = [];
    const provider = await createProvider({ ...config, homeDisks: "auto" }, { log: (e) => events.push(e) });
    expect(provider.homeDisks).toBeUndefined();
    expect(events).toEqual([expect.objectContaining({ reason: "engine_check_failed" })]);

    const refused = await createProvider({ ...config, homeDisks: "on" }).catch((error: unknown) => error);
    expect(isSandboxError(refused, "SANDBOX_PROVIDER_ERROR")).toBe(true);
    // The API (no repairs) never probes: it keeps the setting and reads only mounted disks.
    const api = await createProvider({ ...config, homeDisks: "on" }, { repairs: false });
    expect(await api.homeDisks?.usage("home_without_disk")).toBeNull();
  }, 60_000);

  it("only a process that repairs deletes the disks of homes the store removed", async () => {
    const dir = await dataDir();
    await mkdir(join(dir, "disks"));
    // A disk whose home is gone (a crash between releasing the disk and deleting the home),
    // and a disk image that was never finished.
    await writeFile(join(dir, "disks", "home_gone.img"), "");
    await writeFile(join(dir, "disks", "home_gone.img.new"), "");
    const config = { kind: "docker", image: IMAGE, dataDir: dir, homeDisks: "on" } as const;

    await createProvider(config, { repairs: false });
    expect((await readdir(join(dir, "disks"))).sort()).toEqual(["home_gone.img", "home_gone.img.new"]);

    await createProvider(config);
    expect(await readdir(join(dir, "disks"))).toEqual([]);
  }, 60_000);
});
