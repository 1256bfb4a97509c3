// The chunked workspace transfer over a machine that is this host's shell and filesystem: chunk
// boundaries, the machine's scratch files removed however the transfer ends, and a refused
// archive never reaching the machine (PER-6).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isSandboxError } from "../errors.ts";
import { fileFailure } from "../file-script-exits.ts";
import { buildArchive, readAll } from "../testing/archive.ts";
import { workspaceScriptCommand } from "../workspace-script.ts";
import type { RemoteMachine } from "./surface.ts";
import { exportWorkspaceChunked, importWorkspaceChunked } from "./workspace-transfer.ts";

const MiB = 1024 ** 2;
let root: string;
let calls: { reads: number; writes: number };

/** A "machine" whose commands run in this host's shell. */
function hostMachine(): RemoteMachine {
  return {
    run: ({ command }) =>
      new Promise((resolve) => {
        execFile("/bin/bash", ["-c", command], { maxBuffer: 64 * MiB }, (error, stdout, stderr) => {
          const code = error && typeof error.code === "number" ? error.code : error ? 1 : 0;
          resolve({ exitCode: code, stdout, stderr });
        });
      }),
    readFile: async (file) => {
      calls.reads += 1;
      return new Uint8Array(await readFile(file));
    },
    writeFile: async (file, data) => {
      calls.writes += 1;
      await writeFile(file, data);
    },
    portUrl: () => Promise.reject(new Error("no ports")),
  };
}

const machine = () => hostMachine();
const on = <T>(fn: (m: RemoteMachine) => Promise<T>) => fn(machine());
const fileOpIn =
  (workspace: string) =>
  (m: RemoteMachine, op: string, rel: string, ...args: string[]) =>
    m.run({ command: workspaceScriptCommand(workspace, op, [rel, ...args]), timeoutMs: 0 }).then((result) => {
      if (result.exitCode !== 0) throw fileFailure(result.exitCode, op, rel, result.stderr);
      return result.stdout;
    });
/** This process's scratch files in /tmp (the transfer's names are random, so compare sets). */
const scratch = async () => (await readdir("/tmp")).filter((name) => name.startsWith(".rakazo-"));

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "rakazo-transfer-"));
  calls = { reads: 0, writes: 0 };
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe("chunked workspace transfer", () => {
  it("round-trips a workspace of several chunks byte for byte, leaving no scratch files", async () => {
    const source = path.join(root, "source");
    const target = path.join(root, "target");
    await mkdir(path.join(source, "deep"), { recursive: true });
    await mkdir(target);
    await writeFile(path.join(target, "old.txt"), "replaced");
    // 8 MiB chunks: 19 MiB + headers crosses two boundaries, one of them inside a file.
    const big = randomBytes(19 * MiB);
    await writeFile(path.join(source, "deep", "big.bin"), big);
    await writeFile(path.join(source, "small.txt"), "small");
    const before = await scratch();

    const archive = await readAll(await exportWorkspaceChunked(on, fileOpIn(source)));
    expect(calls.reads).toBe(3);
    expect(archive.length).toBeGreaterThan(19 * MiB);
    await importWorkspaceChunked(on, fileOpIn(target), Readable.from([archive]));
    expect(calls.writes).toBe(3);

    expect((await readFile(path.join(target, "deep", "big.bin"))).equals(big)).toBe(true);
    expect(await readFile(path.join(target, "small.txt"), "utf8")).toBe("small");
    expect(await readdir(target)).not.toContain("old.txt");
    expect(await scratch()).toEqual(before);
  });

  it("removes the machine's export when the reader stops after the first chunk", async () => {
    const source = path.join(root, "source");
    await mkdir(source);
    await writeFile(path.join(source, "big.bin"), randomBytes(20 * MiB));
    const before = await scratch();
    const stream = await exportWorkspaceChunked(on, fileOpIn(source));
    for await (const _chunk of stream) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // At most one chunk read ahead of the reader, never the rest of the archive.
    expect(calls.reads).toBeLessThanOrEqual(2);
    expect(await scratch()).toEqual(before);
  });

  it("refuses a hostile archive before anything reaches the machine (PER-6)", async () => {
    const target = path.join(root, "target");
    await mkdir(target);
    await writeFile(path.join(target, "kept.txt"), "kept");
    const hostile = await buildArchive([{ name: "../escape.txt", data: "evil" }]);
    const error = await importWorkspaceChunked(on, fileOpIn(target), Readable.from([hostile])).catch(
      (e: unknown) => e,
    );
    expect(isSandboxError(error) ? error.code : error).toBe("INVALID_ARCHIVE");
    expect(calls.writes).toBe(0);
    expect(await readFile(path.join(target, "kept.txt"), "utf8")).toBe("kept");
  });
});
