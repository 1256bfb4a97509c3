/**
 * Envelope keys (PER-5):
 *
 *   master key (config or DATA_DIR/master.key, or a KMS)  ──wraps──▶  space content key
 *   space content key                                    ──wraps──▶  home data key
 *   home data key ──HKDF(salt, storage id, revision)──▶ per-object key (./seal.ts)
 *
 * Every wrap is AES-256-GCM with a random nonce and the wrapped key's owner as AAD
 * ("space:<id>", "home:<home key>"), so a wrapped value copied onto another row does not open.
 * Wrapped values are text: `v1.<base64url(nonce ‖ ciphertext ‖ tag)>`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HomeStoreError } from "./errors.ts";

export const KEY_BYTES = 32;

/** The KMS-shaped port: wraps and unwraps small secrets under a key it never hands out. */
export interface KeyWrapper {
  /** Names the wrapping key (for logs and rotation), never the key itself. */
  readonly keyId: string;
  wrap(plaintext: Uint8Array, context: string): Promise<string>;
  /** `KEY_UNWRAP_FAILED` when the key or the context is wrong or the value was altered. */
  unwrap(wrapped: string, context: string): Promise<Buffer>;
}

export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** AES-256-GCM wrap under a key held in memory (master key, space content key). */
export function wrapWithKey(key: Uint8Array, plaintext: Uint8Array, context: string): string {
  if (key.length !== KEY_BYTES) throw new HomeStoreError("INVALID_CONFIG", "wrapping keys are 32 bytes");
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `v1.${Buffer.concat([nonce, body]).toString("base64url")}`;
}

export function unwrapWithKey(key: Uint8Array, wrapped: string, context: string): Buffer {
  if (!wrapped.startsWith("v1.")) throw new HomeStoreError("KEY_UNWRAP_FAILED", "unknown wrapped key format");
  const raw = Buffer.from(wrapped.slice(3), "base64url");
  if (raw.length < 12 + 16) throw new HomeStoreError("KEY_UNWRAP_FAILED", "wrapped key is truncated");
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
  } catch (error) {
    throw new HomeStoreError(
      "KEY_UNWRAP_FAILED",
      `wrapped key for ${context} does not open with this key (wrong master key, or altered)`,
      { cause: error },
    );
  }
}

/** The built-in wrapper: a 32-byte master key in memory. A KMS adapter implements the same port. */
export class LocalKeyWrapper implements KeyWrapper {
  readonly keyId: string;
  readonly #key: Buffer;

  constructor(masterKey: Uint8Array, keyId = "local") {
    if (masterKey.length !== KEY_BYTES) {
      throw new HomeStoreError("INVALID_CONFIG", `the master key must be 32 bytes, got ${masterKey.length}`);
    }
    this.#key = Buffer.from(masterKey);
    this.keyId = keyId;
  }

  async wrap(plaintext: Uint8Array, context: string): Promise<string> {
    return wrapWithKey(this.#key, plaintext, context);
  }

  async unwrap(wrapped: string, context: string): Promise<Buffer> {
    return unwrapWithKey(this.#key, wrapped, context);
  }
}

/** Decodes `RAKAZO_MASTER_KEY` (base64 of 32 bytes). */
export function parseMasterKey(base64: string): Buffer {
  const key = Buffer.from(base64.trim(), "base64");
  if (key.length !== KEY_BYTES) {
    throw new HomeStoreError(
      "INVALID_CONFIG",
      `RAKAZO_MASTER_KEY must be base64 of 32 bytes, got ${key.length}`,
    );
  }
  return key;
}

/**
 * The master key for the embedded default: the configured one if given, else
 * `DATA_DIR/master.key` (base64, mode 0600), created on first start. Creation is atomic
 * (write a temp file, then `link` it into place), so concurrent first starts agree on one key.
 */
export async function loadOrCreateMasterKey(options: {
  readonly configured?: string | undefined;
  readonly dataDir: string;
}): Promise<Buffer> {
  if (options.configured) return parseMasterKey(options.configured);
  const file = join(options.dataDir, "master.key");
  try {
    return parseMasterKey(await readFile(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(options.dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(tmp, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    await rm(tmp, { force: true });
  }
  return parseMasterKey(await readFile(file, "utf8"));
}
