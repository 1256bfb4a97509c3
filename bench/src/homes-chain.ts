/**
 * `pnpm bench --only homes-chain`: incremental checkpoints (docs/persistence.md "Incremental
 * checkpoints") on a 1 GiB home of 128 files of 8 MiB plus one 1 MiB file, every ratio against
 * a baseline measured in the same run:
 * - a checkpoint after rewriting the 1 MiB file, against the full checkpoint of the home, to the
 *   loopback S3 server and to the local store (whose checkpoint of a mounted home never copies:
 *   its baseline is the sealed copy of the whole home a full checkpoint would write);
 * - the same after rewriting 1 MiB inside one 8 MiB file (deltas carry whole files);
 * - a fresh host's restore of a chain of 20 deltas, against its restore of the same files as one
 *   full archive (a second home of hard links), alternated, the best of three each;
 * - the local store's checkpoint after the change against a forced one (medians of five).
 * Disk use peaks around 4 GiB; everything is removed at the end.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, open, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import {
  type AgentHomeStore,
  createSealStream,
  isTransientBrowserFile,
  LocalAgentHomeStore,
  ObjectAgentHomeStore,
} from "@rakazo/homes";
import { startTestS3Server } from "@rakazo/homes/testing";
import { packDirectory } from "@rakazo/sandbox";
import type { BenchReport } from "./row.ts";

const MiB = 1024 * 1024;
const HOME = "home_chain";
const WHOLE = "home_whole";
const DELTAS = 20;

export async function benchHomesChain(
  report: BenchReport,
  options: { totalBytes?: number; fileBytes?: number } = {},
): Promise<void> {
  const totalBytes = options.totalBytes ?? 1024 * MiB;
  const fileBytes = options.fileBytes ?? 8 * MiB;
  const root = await mkdtemp(join(tmpdir(), "rakazo-bench-chain-"));
  const s3 = await startTestS3Server({ bucket: "rakazo-bench-chain" });
  const dataKey = randomBytes(32);
  try {
    const dataDir = join(root, "data");
    const store = new ObjectAgentHomeStore({ dataDir, storage: s3.storage });
    const home = store.homeDir(HOME);
    await mkdir(join(home, "files"), { recursive: true });
    const chunk = randomBytes(fileBytes);
    for (let i = 0; i * fileBytes < totalBytes; i += 1) {
      chunk.writeUInt32BE(i, 0);
      await writeFile(join(home, "files", `f${i}.bin`), chunk);
    }
    const rewriteSmall = () => writeFile(join(home, "changed.bin"), randomBytes(MiB));
    await rewriteSmall();
    let revision = 0;
    const checkpoint = async (on: AgentHomeStore, force = false, homeKey = HOME) => {
      const t = performance.now();
      const result = await on.checkpoint({
        homeKey,
        dataKey,
        previousRevision: revision,
        source: { kind: "local-dir" },
        force,
        commit: async (next) => {
          revision = next;
          return true;
        },
      });
      if (result.status !== "saved") throw new Error("bench: a changed home was not saved");
      return performance.now() - t;
    };

    const full = await checkpoint(store);
    await rewriteSmall();
    const delta = await checkpoint(store);
    row(report, "homes.chain.s3_checkpoint_1mib_change", delta, full, "≤ 0.1×");
    const file = await open(join(home, "files", "f5.bin"), "r+");
    await file.write(randomBytes(MiB), 0, MiB, 0);
    await file.close();
    const inFile = await checkpoint(store);
    row(report, "homes.chain.s3_checkpoint_1mib_in_8mib_file", inFile, full, "≤ 0.1×");
    while (revision < DELTAS + 1) {
      await rewriteSmall();
      await checkpoint(store);
    }
    let objects = 0;
    for await (const o of store.listObjects()) if (o.homeKey === HOME) objects += 1;
    if (objects !== DELTAS + 1)
      throw new Error(`bench: expected a base and ${DELTAS} deltas, found ${objects}`);

    // The same files as one full archive under a second home (hard links, no extra disk).
    const whole = new ObjectAgentHomeStore({
      dataDir,
      storage: s3.storage,
      chain: { maxDeltas: 0, maxDeltaRatio: 0 },
    });
    execFileSync("cp", ["-al", home, whole.homeDir(WHOLE)]);
    const chainRevision = revision;
    revision = 0;
    const fullAgain = await checkpoint(whole, false, WHOLE);
    // No bound: the same work as the first full checkpoint, so its ratio shows the run's noise.
    row(report, "homes.chain.s3_full_checkpoint_repeat", fullAgain, full, "load indicator (1.0× when quiet)");

    // A fresh host's restores, alternated so both see the same load; the best of three each.
    const freshRestore = async (homeKey: string, at: number) => {
      await rm(store.homeDir(homeKey), { recursive: true, force: true });
      await rm(join(dataDir, "home-revisions"), { recursive: true, force: true });
      const t = performance.now();
      await store.materialize({ homeKey, revision: at, dataKey });
      return performance.now() - t;
    };
    const chainRestores: number[] = [];
    const fullRestores: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      chainRestores.push(await freshRestore(HOME, chainRevision));
      fullRestores.push(await freshRestore(WHOLE, 1));
    }
    row(
      report,
      "homes.chain.restore_20_deltas",
      Math.min(...chainRestores),
      Math.min(...fullRestores),
      "≤ 1.2×",
    );
    store.client.destroy();
    whole.client.destroy();

    // The local store: the home is the workspace; a checkpoint fingerprints it and writes nothing.
    const local = new LocalAgentHomeStore({ dataDir: join(root, "local") });
    await mkdir(join(root, "local", "homes"), { recursive: true });
    await rename(store.homeDir(HOME), local.homeDir(HOME));
    revision = 0;
    const median = (values: number[]) =>
      values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    const forced: number[] = [];
    const changed: number[] = [];
    for (let i = 0; i < 5; i += 1) forced.push(await checkpoint(local, true));
    for (let i = 0; i < 5; i += 1) {
      await writeFile(join(local.homeDir(HOME), "changed.bin"), randomBytes(MiB));
      changed.push(await checkpoint(local));
    }
    const sealedCopy = performance.now();
    await pipeline(
      packDirectory(local.homeDir(HOME), { exclude: isTransientBrowserFile }),
      createSealStream({ dataKey, storageId: HOME, revision: 1 }),
      createWriteStream(join(root, "local", "sealed-copy")),
    );
    const sealedFull = performance.now() - sealedCopy;
    row(report, "homes.chain.local_checkpoint_1mib_change", median(changed), sealedFull, "≤ 0.1×");
    row(
      report,
      "homes.chain.local_checkpoint_vs_forced",
      median(changed),
      median(forced),
      "informational: no copy either way",
    );
  } finally {
    await s3.close();
    await rm(root, { recursive: true, force: true });
  }
}

function row(report: BenchReport, name: string, value: number, baseline: number, target: string): void {
  const round = (n: number) => Math.round(n * 100) / 100;
  report({
    name,
    value: round(value),
    unit: "ms",
    baseline: round(baseline),
    ratio: round(value / baseline),
    target,
    better: "lower",
  });
}
