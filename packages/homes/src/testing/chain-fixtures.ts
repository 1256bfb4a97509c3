/** Test helpers for incremental checkpoints: a store on the loopback S3 server and raw objects. */
import { createHash } from "node:crypto";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import type { ChainPolicy } from "../chain.ts";
import { isHomeStoreError } from "../errors.ts";
import { ObjectAgentHomeStore } from "../object-store.ts";
import { readTree } from "./fixtures.ts";
import type { TestS3Server } from "./s3-server.ts";

const TRANSIENT = /Cache|Singleton|BrowserMetrics/;

/**
 * A tree as a checkpoint stores it (transient browser files left out), each file's content as a
 * short digest so a mismatch prints readably.
 */
export async function storedTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [path, content] of Object.entries(await readTree(root))) {
    if (TRANSIENT.test(path)) continue;
    out[path] = content === "dir" ? content : createHash("sha256").update(content).digest("hex").slice(0, 12);
  }
  return out;
}

export function chainStore(s3: TestS3Server, dataDir: string, chain?: ChainPolicy): ObjectAgentHomeStore {
  return new ObjectAgentHomeStore({ dataDir, storage: s3.storage, ...(chain ? { chain } : {}) });
}

/** The computer row's revision, as the store's commit callback sees it. */
export function chainRow(start = 0) {
  const state = { revision: start };
  const commit = async (revision: number) => {
    if (revision !== state.revision + 1) return false;
    state.revision = revision;
    return true;
  };
  return { state, commit };
}

export async function checkpointHome(
  store: ObjectAgentHomeStore,
  homeKey: string,
  dataKey: Uint8Array,
  row: ReturnType<typeof chainRow>,
  force = false,
) {
  return store.checkpoint({
    homeKey,
    dataKey,
    previousRevision: row.state.revision,
    source: { kind: "local-dir" },
    commit: row.commit,
    force,
  });
}

export async function keysOf(store: ObjectAgentHomeStore, homeKey: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.listObjects()) if (o.homeKey === homeKey) keys.push(o.key);
  return keys.sort();
}

export async function getObject(store: ObjectAgentHomeStore, key: string): Promise<Buffer> {
  const out = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
  return Buffer.from(
    await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
  );
}

export async function putObject(store: ObjectAgentHomeStore, key: string, body: Uint8Array): Promise<void> {
  await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: key, Body: body }));
}

/** File modes of a stored tree (relative path → octal): what the format carries. */
export async function modesOf(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const name of (await readdir(join(root, rel))).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const info = await lstat(join(root, path));
      if (info.isFile() && !TRANSIENT.test(path)) out[path] = (info.mode & 0o777).toString(8);
      if (info.isDirectory()) await walk(path);
    }
  };
  await walk("");
  return out;
}

export async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "none";
  } catch (error) {
    return isHomeStoreError(error) ? error.code : `foreign: ${String(error)}`;
  }
}
