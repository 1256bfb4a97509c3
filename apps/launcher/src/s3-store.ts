/**
 * The S3-compatible store of docker-compose.s3.yml: s3rver (the same server the homes
 * tests run against) on :9000, its objects in S3_STORE_DIR, one bucket, and ONE key pair — the
 * one the `secrets` init generated (s3/access-key-id, s3/secret-access-key). s3rver's built-in
 * dummy key (S3RVER/S3RVER) is revoked before it listens. It is meant for one machine on the
 * compose network (not published); checkpoints are sealed before they reach it (PER-5), and an
 * off-host S3 service is the better home for them (docs/self-hosting.md).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import S3rver from "s3rver";
import AWSAccount from "s3rver/lib/models/account.js";

const secretsDir = process.env.RAKAZO_SECRETS_DIR ?? "/run/rakazo-secrets";
const directory = process.env.S3_STORE_DIR ?? "/var/lib/rakazo-s3";
const bucket = process.env.S3_STORE_BUCKET ?? "rakazo-homes";
const port = Number(process.env.S3_STORE_PORT ?? 9000);

const accessKeyId = (await readFile(join(secretsDir, "s3/access-key-id"), "utf8")).trim();
const secretAccessKey = (await readFile(join(secretsDir, "s3/secret-access-key"), "utf8")).trim();
AWSAccount.DUMMY_ACCOUNT.revokeAccessKey("S3RVER");
AWSAccount.DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);

const server = new S3rver({
  address: "0.0.0.0",
  port,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
  // Clients reach it as `http://s3:9000` (path-style). With virtual-host buckets on, s3rver
  // takes any Host that is not an IP or localhost for a bucket name: every call named the
  // bucket "s3" and failed NoSuchBucket, so no checkpoint ever reached the store.
  vhostBuckets: false,
});
const address = await server.run();
process.stdout.write(`${JSON.stringify({ event: "s3.listening", port: address.port, bucket })}\n`);

async function shutdown(): Promise<void> {
  await server.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
