/**
 * `pnpm bench` rows for the home store: checkpoint and restore throughput of a 1 GiB home
 * against a baseline of plain tar + one AES-256-GCM stream over the same files in the same run,
 * and the cost of a checkpoint when nothing changed. Disk use stays around 3–4 GiB (home,
 * bucket, restored copy) and everything is removed at the end.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DeleteObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { createSealStream, createUnsealStream, ObjectAgentHomeStore } from "@rakazo/homes";
import { DEFAULT_PART_SIZE, DEFAULT_UPLOAD_QUEUE } from "@rakazo/homes/object-store";
import { startTestS3Server } from "@rakazo/homes/testing";
import { extractArchive, packDirectory } from "@rakazo/sandbox";
import type { BenchReport } from "./row.ts";

const MiB = 1024 * 1024;

export async function benchHomes(
  report: BenchReport,
  options: { totalBytes?: number; fileBytes?: number } = {},
): Promise<void> {
  const totalBytes = options.totalBytes ?? 1024 * MiB;
  const fileBytes = options.fileBytes ?? 8 * MiB;
  const root = await mkdtemp(join(tmpdir(), "rakazo-bench-homes-"));
  const s3 = await startTestS3Server({ bucket: "rakazo-bench" });
  try {
    const dataDir = join(root, "data");
    const store = new ObjectAgentHomeStore({ dataDir, storage: s3.storage });
    const home = store.homeDir("home_bench");
    await mkdir(join(home, "files"), { recursive: true });
    const chunk = randomBytes(fileBytes);
    for (let i = 0; i * fileBytes < totalBytes; i += 1) {
      chunk.writeUInt32BE(i, 0);
      await writeFile(join(home, "files", `f${i}.bin`), chunk);
    }
    const mib = totalBytes / MiB;
    const dataKey = randomBytes(32);

    // Baseline: tar + one AES-256-GCM stream to a file, then decrypt + extract.
    const key = randomBytes(32);
    const iv = randomBytes(12);
    const baselineFile = join(root, "baseline.enc");
    let t = performance.now();
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    await pipeline(packDirectory(home), cipher, createWriteStream(baselineFile));
    const baselineCheckpoint = mib / ((performance.now() - t) / 1000);
    const tag = cipher.getAuthTag();
    t = performance.now();
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAuthTag(tag);
    await extractArchive(createReadStream(baselineFile).pipe(decipher), join(root, "baseline-restore"));
    const baselineRestore = mib / ((performance.now() - t) / 1000);
    await rm(baselineFile, { force: true });
    await rm(join(root, "baseline-restore"), { recursive: true, force: true });

    // Sealing alone (pack + 64 KiB segments) to a null sink: what the format costs.
    t = performance.now();
    await pipeline(
      packDirectory(home),
      createSealStream({ dataKey, storageId: "home_bench", revision: 1 }),
      new Writable({ write: (_c, _e, cb) => cb() }),
    );
    const sealOnly = mib / ((performance.now() - t) / 1000);
    report({
      name: "homes.seal_throughput",
      value: round(sealOnly),
      unit: "MiB/s",
      baseline: round(baselineCheckpoint),
      ratio: round(sealOnly / baselineCheckpoint),
    });

    // What the loopback S3 server itself allows, with the same sealed bytes from a local file:
    // one PutObject, and a multipart upload with the store's part size and concurrency (s3rver
    // writes every part, then re-reads, re-hashes and re-writes them all on completion).
    const sealedFile = join(root, "sealed.bin");
    await pipeline(
      packDirectory(home),
      createSealStream({ dataKey, storageId: "home_bench", revision: 1 }),
      createWriteStream(sealedFile),
    );
    const sealedBytes = (await stat(sealedFile)).size;
    t = performance.now();
    await store.client.send(
      new PutObjectCommand({
        Bucket: s3.storage.bucket,
        Key: "raw/put",
        Body: createReadStream(sealedFile),
        ContentLength: sealedBytes,
      }),
    );
    const rawPut = mib / ((performance.now() - t) / 1000);
    await store.client.send(new DeleteObjectCommand({ Bucket: s3.storage.bucket, Key: "raw/put" }));
    t = performance.now();
    await new Upload({
      client: store.client,
      params: { Bucket: s3.storage.bucket, Key: "raw/multipart", Body: createReadStream(sealedFile) },
      partSize: DEFAULT_PART_SIZE,
      queueSize: DEFAULT_UPLOAD_QUEUE,
    }).done();
    const rawMultipart = mib / ((performance.now() - t) / 1000);
    await store.client.send(new DeleteObjectCommand({ Bucket: s3.storage.bucket, Key: "raw/multipart" }));
    report({
      name: "homes.s3_raw_put_throughput",
      value: round(rawPut),
      unit: "MiB/s",
      baseline: round(baselineCheckpoint),
      ratio: round(rawPut / baselineCheckpoint),
    });
    report({
      name: "homes.s3_raw_multipart_throughput",
      value: round(rawMultipart),
      unit: "MiB/s",
      baseline: round(baselineCheckpoint),
      ratio: round(rawMultipart / baselineCheckpoint),
    });

    // Full checkpoint: fingerprint, pack, seal, multipart upload to the loopback S3 server.
    let revision = 0;
    const commit = async (next: number) => {
      revision = next;
      return true;
    };
    t = performance.now();
    await store.checkpoint({
      homeKey: "home_bench",
      dataKey,
      previousRevision: 0,
      source: { kind: "local-dir" },
      commit,
    });
    const checkpoint = mib / ((performance.now() - t) / 1000);
    report({
      name: "homes.checkpoint_throughput",
      value: round(checkpoint),
      unit: "MiB/s",
      baseline: round(baselineCheckpoint),
      ratio: round(checkpoint / baselineCheckpoint),
    });
    // The same checkpoint against what the server allows for a multipart upload of its bytes.
    report({
      name: "homes.checkpoint_vs_raw_multipart",
      value: round(checkpoint),
      unit: "MiB/s",
      baseline: round(rawMultipart),
      ratio: round(checkpoint / rawMultipart),
    });

    t = performance.now();
    const again = await store.checkpoint({
      homeKey: "home_bench",
      dataKey,
      previousRevision: revision,
      source: { kind: "local-dir" },
      commit,
    });
    const unchangedMs = performance.now() - t;
    if (again.status !== "unchanged") throw new Error("bench: an unchanged home was checkpointed again");
    report({
      name: "homes.checkpoint_unchanged",
      value: round(unchangedMs),
      unit: "ms",
      baseline: 100,
      ratio: round(unchangedMs / 100),
    });

    // Restore on a fresh host: download, verify every segment, extract to staging, swap.
    await rm(home, { recursive: true, force: true });
    await rm(join(dataDir, "home-revisions"), { recursive: true, force: true });
    t = performance.now();
    await store.materialize({ homeKey: "home_bench", revision, dataKey });
    const restore = mib / ((performance.now() - t) / 1000);
    report({
      name: "homes.restore_throughput",
      value: round(restore),
      unit: "MiB/s",
      baseline: round(baselineRestore),
      ratio: round(restore / baselineRestore),
    });

    // Unsealing alone, from the sealed bytes written above (same files, same key).
    t = performance.now();
    await extractArchive(
      createReadStream(sealedFile).pipe(
        createUnsealStream({ dataKey, storageId: "home_bench", revision: 1 }),
      ),
      join(root, "unseal-restore"),
    );
    const unsealRestore = mib / ((performance.now() - t) / 1000);
    report({
      name: "homes.unseal_extract_throughput",
      value: round(unsealRestore),
      unit: "MiB/s",
      baseline: round(baselineRestore),
      ratio: round(unsealRestore / baselineRestore),
    });
    store.client.destroy();
  } finally {
    await s3.close();
    await rm(root, { recursive: true, force: true });
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
