import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalAgentHomeStore } from "./local-store.ts";
import { ObjectAgentHomeStore } from "./object-store.ts";
import { readTree, writeTree } from "./testing/fixtures.ts";
import { startTestS3Server, type TestS3Server } from "./testing/s3-server.ts";

const CHILD = join(import.meta.dirname, "testing", "checkpoint-child.ts");
let s3: TestS3Server;
let root: string;
const dataKey = randomBytes(32);

beforeAll(async () => {
  s3 = await startTestS3Server();
  root = await mkdtemp(join(tmpdir(), "rakazo-crash-"));
});
afterAll(async () => {
  await s3.close();
  await rm(root, { recursive: true, force: true });
});

function bigFiles(n: number): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (let i = 0; i < n; i += 1) out[`big/f${i}.bin`] = randomBytes(8 * 1024 * 1024);
  return out;
}

/** Runs the child until it reports progress, waits `afterMs`, then SIGKILLs it. */
async function killMidway(args: string[], afterMs: number): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [CHILD, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child never started: ${out}`)), 20_000);
    child.stdout?.on("data", () => {
      if (out.includes("started")) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
  return out;
}

describe("a checkpoint killed midway", () => {
  it("object store: SIGKILL mid-upload leaves the previous revision restorable", async () => {
    const dataDir = join(root, "object");
    const store = new ObjectAgentHomeStore({ dataDir, storage: s3.storage });
    const first = { "notes/a.txt": "revision one", "b.bin": randomBytes(100_000) };
    await writeTree(store.homeDir("home_k"), first);
    let revision = 0;
    await store.checkpoint({
      homeKey: "home_k",
      dataKey,
      previousRevision: 0,
      source: { kind: "local-dir" },
      commit: async (r) => {
        revision = r;
        return true;
      },
    });
    const expected = await readTree(store.homeDir("home_k"));
    await writeTree(store.homeDir("home_k"), bigFiles(40));
    const commitFile = join(root, "object-commit");
    const out = await killMidway(
      [
        "object",
        JSON.stringify({
          dataDir,
          storage: s3.storage,
          homeKey: "home_k",
          previousRevision: revision,
          dataKeyHex: dataKey.toString("hex"),
          commitFile,
        }),
      ],
      400,
    );
    expect(out).not.toContain("finished");
    await expect(readFile(commitFile, "utf8")).rejects.toThrow(); // never committed
    // A fresh host restores revision 1 from the bucket; the dead child's lock is taken over.
    await rm(join(dataDir, "homes"), { recursive: true, force: true });
    await rm(join(dataDir, "home-revisions", "home_k.json"), { force: true });
    await store.materialize({ homeKey: "home_k", revision, dataKey });
    expect(await readTree(store.homeDir("home_k"))).toEqual(expected);
  }, 60_000);

  it("local store: SIGKILL mid-extraction leaves the previous home intact", async () => {
    const dataDir = join(root, "local");
    const store = new LocalAgentHomeStore({ dataDir });
    await writeTree(store.homeDir("home_l"), { "keep.txt": "previous" });
    const expected = await readTree(store.homeDir("home_l"));
    const sourceDir = join(root, "source");
    await writeTree(sourceDir, bigFiles(40));
    const out = await killMidway(
      [
        "local-archive",
        JSON.stringify({
          dataDir,
          storage: s3.storage,
          homeKey: "home_l",
          previousRevision: 0,
          dataKeyHex: dataKey.toString("hex"),
          commitFile: join(root, "local-commit"),
          sourceDir,
        }),
      ],
      300,
    );
    expect(out).not.toContain("finished");
    const dir = await store.materialize({ homeKey: "home_l", revision: 0 });
    expect(await readTree(dir)).toEqual(expected);
    // The interrupted staging folder is gone.
    expect(await readdir(join(dataDir, "homes"))).toEqual(["home_l"]);
  }, 60_000);
});
