/**
 * Bounded homes and the read-only system against a real engine and image: a home
 * on its own loop-mounted disk (home-disk.ts) fills up with ENOSPC inside the computer while the
 * host loses at most the disk's size and a neighbour keeps working; the system is read-only,
 * scratch is sized tmpfs, and every tool the image ships still runs; a crash's leftovers (mounts,
 * loop devices) are released by `settleHomeDisks`.
 *
 * Needs root (losetup, mount) besides the engine and image; the gate names what is missing.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, statfs, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { isSandboxError } from "../../errors.ts";
import type { Sandbox, SandboxProvider } from "../../provider.ts";
import { requireDocker, requireRoot } from "../../testing/tools.ts";
import { createDockerProvider } from "./docker-provider.ts";
import { attachHomeDisk, createHomeDisks, isAttached, settleHomeDisks } from "./home-disk.ts";
import { createSupervisedDockerProvider } from "./supervised.ts";

const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const LABEL_PREFIX = "rakazo-disk-test";
const MIB = 1024 ** 2;
const DISK = 96 * MIB;
const docker = new Docker({ socketPath: "/var/run/docker.sock" });

const gate = await requireDocker("docker home disks", [
  "losetup",
  "mkfs.ext4",
  "mount",
  "umount",
  "resize2fs",
]);
// Mounting needs root: like a missing tool, a skip locally and a failure under CI=true.
const rootGate = gate.skip ? gate : requireRoot("docker home disks");

const dataDirs: string[] = [];
const made: { provider: SandboxProvider; homeKey: string; ref: string }[] = [];

function newProvider(dataDir: string, options: { command?: readonly string[] } = {}): SandboxProvider {
  return createDockerProvider({
    docker,
    image: IMAGE,
    dataDir,
    labelPrefix: LABEL_PREFIX,
    memoryBytes: 1024 ** 3,
    pidsLimit: 512,
    homeDisks: true,
    diskBytes: DISK,
    command: options.command ?? ["sleep", "infinity"],
  });
}

async function newComputer(provider: SandboxProvider, diskBytes?: number): Promise<Sandbox> {
  const suffix = randomBytes(4).toString("hex");
  const homeKey = `home-${suffix}`;
  const { ref } = await provider.provision({
    computerId: `cmp_disk_${suffix}`,
    mode: "private",
    homeKey,
    ...(diskBytes ? { sizing: { diskBytes } } : {}),
  });
  made.push({ provider, homeKey, ref });
  return provider.sandbox(ref);
}

const sh = (sandbox: Sandbox, script: string) =>
  sandbox.exec({ argv: ["sh", "-c", script], timeoutMs: 120_000 });

/** Loop devices backed by files under `dir`. */
function loopsUnder(dir: string): string[] {
  const out = execFileSync("losetup", ["-J", "-l"], { encoding: "utf8" }).trim();
  if (!out) return [];
  return (JSON.parse(out) as { loopdevices: { name: string; "back-file": string | null }[] }).loopdevices
    .filter((device) => device["back-file"]?.startsWith(`${dir}/`))
    .map((device) => device.name);
}

afterAll(async () => {
  const mine = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL_PREFIX}.managed=true`] },
  });
  for (const c of mine) await docker.getContainer(c.Id).remove({ force: true, v: true });
  // The supervised provider labels with the default prefix: each machine is destroyed by its own.
  for (const { provider, ref } of made) await provider.destroy(ref).catch(() => {});
  for (const { provider, homeKey } of made) await provider.homeDisks?.remove(homeKey).catch(() => {});
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
}, 120_000);

describe.skipIf(rootGate.skip)(rootGate.title, () => {
  it("a home that fills its disk gets ENOSPC inside; the host loses at most the disk's size; a neighbour keeps working", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-"));
    dataDirs.push(dataDir);
    const provider = newProvider(dataDir);
    const before = await statfs(dataDir);
    const full = await newComputer(provider);
    const neighbour = await newComputer(provider);

    // 200 MiB into a 96 MiB home: dd stops at the disk's end.
    const fill = await sh(full, "dd if=/dev/zero of=big bs=1M count=200 2>&1; echo exit=$?");
    expect(fill.stdout).toContain("No space left on device");
    expect(fill.stdout).not.toContain("exit=0");
    const df = await sh(full, "df -B1 --output=size,avail . | tail -1");
    const [size, avail] = df.stdout.trim().split(/\s+/).map(Number);
    expect(size).toBeLessThanOrEqual(DISK);
    expect(avail).toBeLessThan(MIB);

    const after = await statfs(dataDir);
    const lost = (before.bavail - after.bavail) * after.bsize;
    // Both disks' metadata plus the full one's data: never more than the two sizes.
    expect(lost).toBeLessThanOrEqual(2 * DISK);

    const other = await sh(neighbour, "echo hello > note && cat note && df -B1 --output=avail . | tail -1");
    expect(other.exitCode).toBe(0);
    expect(other.stdout).toContain("hello");
    expect(Number(other.stdout.trim().split("\n").at(-1))).toBeGreaterThan(DISK / 2);
    // The full one still runs commands and can free its space again.
    expect((await sh(full, "rm big && echo again > small && cat small")).stdout).toContain("again");

    const usage = await provider.homeDisks?.usage(made.at(-2)?.homeKey ?? "");
    expect(usage?.sizeBytes).toBeGreaterThan(DISK / 2);
    expect(usage?.sizeBytes).toBeLessThanOrEqual(DISK);
  });

  it("a computer's own disk size wins over the default; files in a plain home move onto its new disk", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-"));
    dataDirs.push(dataDir);
    const provider = newProvider(dataDir);
    // A home from before disks (or restored here while none was mounted).
    const suffix = randomBytes(4).toString("hex");
    const homeKey = `home-${suffix}`;
    const homeDir = join(dataDir, "homes", homeKey);
    await mkdir(join(homeDir, "docs"), { recursive: true });
    await writeFile(join(homeDir, "docs", "kept.txt"), "from before\n");
    const { ref } = await provider.provision({
      computerId: `cmp_disk_${suffix}`,
      mode: "private",
      homeKey,
      sizing: { diskBytes: 160 * MIB },
    });
    made.push({ provider, homeKey, ref });
    const sandbox = provider.sandbox(ref);
    const out = await sh(sandbox, "cat docs/kept.txt; df -B1 --output=size . | tail -1; ls -A");
    expect(out.stdout).toContain("from before");
    expect(Number(out.stdout.split("\n")[1])).toBeGreaterThan(130 * MIB);
    // No lost+found: the export runs as the workspace user and could not read it.
    expect(out.stdout).not.toContain("lost+found");
    expect(await isAttached(homeDir)).toBe(true);
  });

  it("two attaches of one home at once mount its disk once", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-"));
    dataDirs.push(dataDir);
    const homeKey = `home-${randomBytes(4).toString("hex")}`;
    const homeDir = join(dataDir, "homes", homeKey);
    await mkdir(homeDir, { recursive: true });
    const results = await Promise.all([
      attachHomeDisk(dataDir, homeKey, homeDir, DISK),
      attachHomeDisk(dataDir, homeKey, homeDir, DISK),
    ]);
    expect(results.map((result) => result.mounted).sort()).toEqual([false, true]);
    const mounts = execFileSync("findmnt", ["-n", "-o", "TARGET", "--mountpoint", homeDir], {
      encoding: "utf8",
    });
    expect(mounts.trim().split("\n")).toHaveLength(1);
    await createHomeDisks(dataDir).remove(homeKey);
    expect(await isAttached(homeDir)).toBe(false);
    expect(loopsUnder(join(dataDir, "disks"))).toEqual([]);
  });

  it("the system is read-only, scratch is sized tmpfs, and every tool the image ships still runs", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-"));
    dataDirs.push(dataDir);
    const sandbox = await newComputer(newProvider(dataDir));
    const writes = await sh(
      sandbox,
      "for p in /usr/bin/x /usr/local/x /etc/x /opt/rakazo/x /var/lib/x /x; do touch $p 2>/dev/null && echo wrote:$p; done; echo done",
    );
    expect(writes.stdout.trim()).toBe("done");
    const scratch = await sh(
      sandbox,
      "for d in /tmp /var/tmp /home/user /run/lock; do echo x > $d/probe && findmnt -n -o FSTYPE,OPTIONS $d; done",
    );
    expect(scratch.exitCode).toBe(0);
    const lines = scratch.stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line).toMatch(/^tmpfs .*size=/);
    // /tmp holds at most a quarter of the 1 GiB memory.
    const tmpFill = await sh(sandbox, "dd if=/dev/zero of=/tmp/big bs=1M count=400 2>&1; rm -f /tmp/big");
    expect(tmpFill.stdout).toContain("No space left on device");

    const tools = await sh(
      sandbox,
      [
        "set -e",
        "gh --version | head -1",
        "pipx --version",
        "python3 -c 'import openpyxl; print(\"openpyxl\", openpyxl.__version__)'",
        "python3 -m venv /tmp/venv && /tmp/venv/bin/python -c 'print(\"venv ok\")'",
        "printf '%s\\n' '# Title' > t.md && pandoc t.md -o t.html && grep -c Title t.html",
        "printf '%s' '%PDF-1.1' > none.pdf; pdftotext -v 2>&1 | head -1",
        "bash -ic 'echo terminal ok' 2>/dev/null",
        "Xvfb :42 -nolisten tcp >/tmp/xvfb.log 2>&1 & sleep 1.5; test -S /tmp/.X11-unix/X42 && echo xvfb ok",
        "(x11vnc -display :42 -unixsock /tmp/vnc.sock -rfbport 0 -forever -nopw -quiet >/tmp/x11vnc.log 2>&1 &); sleep 1.5; test -S /tmp/vnc.sock && echo vnc ok || cat /tmp/x11vnc.log",
        // As the supervisor starts it (stack-argv.ts), on the display; its window is found by xdotool.
        "(DISPLAY=:42 chromium --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage --password-store=basic --user-data-dir=$PWD/.profile-probe about:blank >/tmp/chromium.log 2>&1 &)",
        "for i in $(seq 60); do DISPLAY=:42 xdotool search --onlyvisible --class chromium >/dev/null 2>&1 && break; sleep 0.5; done",
        "DISPLAY=:42 xdotool search --onlyvisible --class chromium >/dev/null && echo chromium ok || tail -5 /tmp/chromium.log",
        "test -d .profile-probe/Default && echo profile ok",
      ].join("\n"),
    );
    expect(tools.exitCode, `${tools.stdout}\n${tools.stderr}`).toBe(0);
    for (const expected of [
      "gh version",
      "openpyxl",
      "venv ok",
      "xvfb ok",
      "vnc ok",
      "chromium ok",
      "profile ok",
      "terminal ok",
    ]) {
      expect(tools.stdout).toContain(expected);
    }
    expect(tools.stdout).toMatch(/^1$/m);
    expect(tools.stdout).toMatch(/pdftotext version/);
  });

  it("after a crash, settleHomeDisks releases half-made disks and loose loop devices and mounts every home's disk again", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-"));
    dataDirs.push(dataDir);
    const provider = newProvider(dataDir);
    const sandbox = await newComputer(provider);
    await sh(sandbox, "echo survived > mark");
    const homeKey = made.at(-1)?.homeKey ?? "";
    const homeDir = join(dataDir, "homes", homeKey);
    const disks = join(dataDir, "disks");
    await docker.getContainer(sandbox.ref).remove({ force: true });
    // What a crash leaves: the home unmounted (a reboot), a half-made disk mounted at its
    // staging point, a loop device nothing mounts, and the disk of a home the store deleted.
    execFileSync("umount", [homeDir]);
    execFileSync("truncate", ["-s", String(64 * MIB), join(disks, `${homeKey}.img.new`)]);
    execFileSync("mkfs.ext4", ["-q", "-F", join(disks, `${homeKey}.img.new`)]);
    await mkdir(join(disks, `${homeKey}.img.mnt`));
    execFileSync("mount", [
      "-o",
      "loop",
      join(disks, `${homeKey}.img.new`),
      join(disks, `${homeKey}.img.mnt`),
    ]);
    execFileSync("cp", ["--sparse=always", join(disks, `${homeKey}.img`), join(disks, "gone.img")]);
    execFileSync("losetup", ["-f", join(disks, "gone.img")]);
    expect(loopsUnder(disks).length).toBe(2);

    await settleHomeDisks(dataDir);

    expect(loopsUnder(disks)).toHaveLength(1);
    expect((await readdir(disks)).sort()).toEqual([`${homeKey}.img`]);
    expect(await isAttached(homeDir)).toBe(true);
    const again = await provider.provision({
      computerId: `cmp_disk_again_${homeKey}`,
      mode: "private",
      homeKey,
    });
    expect((await sh(provider.sandbox(again.ref), "cat mark")).stdout).toContain("survived");

    // The home store's delete: the disk goes with the home, and its loop device with it.
    await docker.getContainer(again.ref).remove({ force: true });
    await provider.homeDisks?.remove(homeKey);
    expect(loopsUnder(disks)).toEqual([]);
    expect(await readdir(disks)).toEqual([]);
  });

  it("a full home refuses a new desktop at once (MULTI_SCREEN_UNAVAILABLE, reason disk); with room again it starts", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-disk-"));
    dataDirs.push(dataDir);
    const provider = createSupervisedDockerProvider({
      image: IMAGE,
      dataDir,
      memoryBytes: 1024 ** 3,
      pidsLimit: 1024,
      homeDisks: "on",
      diskBytes: DISK,
    });
    const sandbox = await newComputer(provider);
    await sh(sandbox, "dd if=/dev/zero of=big bs=1M count=200 >/dev/null 2>&1; true");
    const refused = await sandbox.desktop?.observe("bot_full").catch((error: unknown) => error);
    expect(isSandboxError(refused, "MULTI_SCREEN_UNAVAILABLE")).toBe(true);
    expect((refused as { details?: Record<string, unknown> }).details?.reason).toBe("disk");
    // Nothing was started for it.
    expect(await sandbox.desktop?.list()).toEqual([]);

    await sh(sandbox, "rm big");
    const observed = await sandbox.desktop?.observe("bot_full");
    expect(observed?.png.byteLength).toBeGreaterThan(100);
    await sandbox.desktop?.release("bot_full");
    await provider.destroy(sandbox.ref);
    await provider.homeDisks?.remove(made.at(-1)?.homeKey ?? "");
    expect(loopsUnder(join(dataDir, "disks"))).toEqual([]);
  }, 180_000);
});
