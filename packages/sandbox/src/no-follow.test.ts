// The host boundary's class of bug, in files: the host reads a computer's home
// without following a symlink at any component, even when the computer swaps one in between
// the host's check and its open (TOCTOU).
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packDirectory } from "./archive.ts";
import { DIRECTORY_NO_FOLLOW, FILE_NO_FOLLOW, fdPath, openBeneath } from "./no-follow.ts";
import { readAll } from "./testing/archive.ts";

let base: string;
let home: string;
let victim: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "rakazo-no-follow-"));
  home = join(base, "homes", "attacker");
  victim = join(base, "homes", "victim");
  await mkdir(join(home, "a", "b"), { recursive: true });
  await writeFile(join(home, "a", "b", "mine.txt"), "mine");
  await mkdir(victim, { recursive: true });
  await writeFile(join(victim, "secret.txt"), "VICTIM-SECRET");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function errno(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "opened",
    (error: NodeJS.ErrnoException) => error.code ?? String(error),
  );
}

describe("openBeneath", () => {
  it("opens a real path beneath the root", async () => {
    const handle = await openBeneath(home, "a/b/mine.txt", FILE_NO_FOLLOW);
    try {
      expect((await handle.readFile()).toString()).toBe("mine");
    } finally {
      await handle.close();
    }
    const dir = await openBeneath(home, "a/b", DIRECTORY_NO_FOLLOW);
    try {
      expect(await readFile(fdPath(dir, "mine.txt"), "utf8")).toBe("mine");
    } finally {
      await dir.close();
    }
  });

  it("refuses a symlink at the root, in the middle and at the end", async () => {
    await symlink(victim, join(base, "root-link"));
    expect(await errno(openBeneath(join(base, "root-link"), "", DIRECTORY_NO_FOLLOW))).toMatch(
      /ELOOP|ENOTDIR/,
    );
    await symlink(victim, join(home, "a", "mid"));
    expect(await errno(openBeneath(home, "a/mid/secret.txt", FILE_NO_FOLLOW))).toMatch(/ELOOP|ENOTDIR/);
    await symlink(join(victim, "secret.txt"), join(home, "a", "b", "last"));
    expect(await errno(openBeneath(home, "a/b/last", FILE_NO_FOLLOW))).toBe("ELOOP");
    await symlink(victim, join(home, "first"));
    expect(await errno(openBeneath(home, "first/secret.txt", FILE_NO_FOLLOW))).toMatch(/ELOOP|ENOTDIR/);
  });

  it("refuses names that are not one component", () => {
    return openBeneath(home, "", DIRECTORY_NO_FOLLOW).then(async (dir) => {
      try {
        for (const bad of ["..", ".", "a/b", ""])
          expect(() => fdPath(dir, bad)).toThrow(/single path component/);
      } finally {
        await dir.close();
      }
    });
  });
});

describe("packDirectory while the computer swaps symlinks in (TOCTOU)", () => {
  it("never packs another home's file", async () => {
    await mkdir(join(home, "d"));
    await writeFile(join(home, "d", "secret.txt"), "own");
    await writeFile(join(home, "f.txt"), "own");
    // Another process flips `d` between a real directory and a symlink to the victim's home,
    // and `f.txt` between a file and a symlink to the victim's file.
    const script = `
      const fs = require("node:fs"), p = require("node:path");
      const home = ${JSON.stringify(home)}, victim = ${JSON.stringify(victim)};
      fs.renameSync(p.join(home, "d"), p.join(home, "d.real"));
      fs.linkSync(p.join(home, "f.txt"), p.join(home, "f.real"));
      fs.symlinkSync(victim, p.join(home, "d.link"));
      fs.symlinkSync(p.join(victim, "secret.txt"), p.join(home, "f.link"));
      const swap = (from, to) => { try { fs.renameSync(from, to); } catch {} };
      const end = Date.now() + 2500;
      while (Date.now() < end) {
        fs.symlinkSync(victim, p.join(home, "d.tmp")); swap(p.join(home, "d.tmp"), p.join(home, "d"));
        fs.symlinkSync(p.join(victim, "secret.txt"), p.join(home, "f.tmp")); swap(p.join(home, "f.tmp"), p.join(home, "f.txt"));
        fs.rmSync(p.join(home, "d"), { force: true }); swap(p.join(home, "d.real"), p.join(home, "d"));
        fs.linkSync(p.join(home, "f.real"), p.join(home, "f.tmp")); swap(p.join(home, "f.tmp"), p.join(home, "f.txt"));
        swap(p.join(home, "d"), p.join(home, "d.real"));
      }
    `;
    const child = spawn(process.execPath, ["-e", script], { stdio: "inherit" });
    const done = new Promise((resolve) => child.on("exit", resolve));
    let packs = 0;
    let withOwnFile = 0;
    const started = Date.now();
    while (Date.now() - started < 2000) {
      const archive = (await readAll(packDirectory(home)).catch(() => Buffer.alloc(0))).toString("latin1");
      expect(archive).not.toContain("VICTIM-SECRET");
      packs += 1;
      if (archive.includes("a/b/mine.txt")) withOwnFile += 1;
    }
    await done;
    // The packs did run (and kept the home's own files) while the swaps went on.
    expect(packs).toBeGreaterThan(5);
    expect(withOwnFile).toBeGreaterThan(5);
  });
});
