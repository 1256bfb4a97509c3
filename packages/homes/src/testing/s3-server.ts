/**
 * A real S3-compatible server on loopback for tests: s3rver, with its files in a
 * temp folder, and one bucket. Clients use `forcePathStyle: true` (see createS3Client).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import S3rver from "s3rver";
import { createS3Client, type ObjectStorageConfig } from "../object-store.ts";

export interface TestS3Server {
  readonly storage: ObjectStorageConfig;
  /** Stops the server and removes its files. */
  close(): Promise<void>;
}

export async function startTestS3Server(options: { bucket?: string } = {}): Promise<TestS3Server> {
  const directory = await mkdtemp(join(tmpdir(), "rakazo-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  const storage: ObjectStorageConfig = {
    bucket: options.bucket ?? "rakazo-homes",
    endpoint: `http://127.0.0.1:${port}`,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
  };
  const client = createS3Client(storage);
  await client.send(new CreateBucketCommand({ Bucket: storage.bucket }));
  client.destroy();
  return {
    storage,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Writes raw bytes at `key` (tamper and reconciler tests). */
export async function putRawObject(storage: ObjectStorageConfig, key: string, body: Uint8Array | string) {
  const client = createS3Client(storage);
  try {
    await client.send(new PutObjectCommand({ Bucket: storage.bucket, Key: key, Body: body }));
  } finally {
    client.destroy();
  }
}
