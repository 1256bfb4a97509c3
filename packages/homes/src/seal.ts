/**
 * Sealed checkpoints (security.md "Sealed checkpoints", PER-4): a streaming AEAD in the shape of
 * Tink's AES-GCM-HKDF-Streaming.
 *
 *   object  = header ‖ segment_0 ‖ … ‖ segment_n
 *   header  = "RKZH" ‖ version u8 ‖ body length u16 ‖ body
 *   body    = segment size u32 ‖ salt[32] ‖ nonce prefix[7] ‖ revision u64 ‖ storage id (utf-8)
 *   key     = HKDF-SHA256(data key, salt, info = "rakazo-home-v1" ‖ 0 ‖ storage id ‖ 0 ‖ revision)
 *   nonce_i = nonce prefix ‖ i u32 ‖ last u8          (12 bytes; last = 1 only on the final one)
 *   AAD_i   = header ‖ i u32 ‖ last u8
 *   segment = AES-256-GCM(key, nonce_i, AAD_i, plaintext_i) ‖ tag[16]
 *
 * Every segment but the last carries exactly `segment size` plaintext bytes; the last carries
 * 0..segment size. Reordering changes i, dropping the tail makes a non-final segment be read as
 * the final one, and a segment or header from another revision or home derives another key: all
 * fail the tag. The opener also insists the header names the identity the caller expects.
 * A fresh random salt per object makes the per-object key fresh, so (key, nonce) never repeats.
 *
 * Version 1 objects are whole workspaces (a tar); version 2 objects are the deltas of an
 * incremental chain (./chain.ts). The version byte is part of every segment's AAD, so a base
 * cannot be passed off as a delta or the other way round.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { HomeStoreError } from "./errors.ts";

export const SEAL_FORMAT_VERSION = 1;
/** Version byte of a delta object (same layout, kind "delta"). */
export const SEAL_DELTA_VERSION = 2;
export type SealKind = "base" | "delta";
export const DEFAULT_SEGMENT_SIZE = 64 * 1024;
const MAGIC = Buffer.from("RKZH", "ascii");
const TAG_BYTES = 16;
const SALT_BYTES = 32;
const PREFIX_BYTES = 7;
const MAX_SEGMENTS = 2 ** 32 - 1;
const MAX_SEGMENT_SIZE = 16 * 1024 * 1024;

export interface SealIdentity {
  /** The home's storage id (its home key); objects live at `homes/<storage id>/<revision>`. */
  readonly storageId: string;
  readonly revision: number;
}

export interface SealOptions extends SealIdentity {
  /** The home's 32-byte data key. */
  readonly dataKey: Uint8Array;
  readonly segmentSize?: number;
  /** What the object holds: a whole workspace (default) or a delta (./chain.ts). */
  readonly kind?: SealKind;
  /**
   * Sees the object's header as soon as it is written (seal) or has named the expected identity
   * (unseal), with its kind and SHA-256: a delta names its parent by that digest.
   */
  readonly onHeader?: (header: { readonly kind: SealKind; readonly digest: string }) => void;
}

/** SHA-256 (hex) of a sealed object's header: random salt and prefix make it unique per object. */
export function headerDigest(header: Buffer): string {
  return createHash("sha256").update(header).digest("hex");
}

interface Header {
  readonly bytes: Buffer;
  readonly segmentSize: number;
  readonly salt: Buffer;
  readonly noncePrefix: Buffer;
  readonly revision: number;
  readonly storageId: string;
}

function encodeHeader(
  identity: SealIdentity,
  segmentSize: number,
  salt: Buffer,
  prefix: Buffer,
  version: number,
): Buffer {
  const id = Buffer.from(identity.storageId, "utf8");
  const body = Buffer.alloc(4 + SALT_BYTES + PREFIX_BYTES + 8 + id.length);
  let o = body.writeUInt32BE(segmentSize, 0);
  o += salt.copy(body, o);
  o += prefix.copy(body, o);
  o = body.writeBigUInt64BE(BigInt(identity.revision), o);
  id.copy(body, o);
  const head = Buffer.alloc(7);
  MAGIC.copy(head, 0);
  head.writeUInt8(version, 4);
  head.writeUInt16BE(body.length, 5);
  return Buffer.concat([head, body]);
}

function deriveKey(dataKey: Uint8Array, salt: Buffer, identity: SealIdentity): Buffer {
  if (dataKey.length !== 32) throw new HomeStoreError("KEY_UNAVAILABLE", "a home data key is 32 bytes");
  const info = Buffer.concat([
    Buffer.from("rakazo-home-v1\0", "ascii"),
    Buffer.from(identity.storageId, "utf8"),
    Buffer.from(`\0${identity.revision}`, "ascii"),
  ]);
  return Buffer.from(hkdfSync("sha256", dataKey, salt, info, 32));
}

function segmentParams(header: Header, index: number, last: boolean): { nonce: Buffer; aad: Buffer } {
  const tail = Buffer.alloc(5);
  tail.writeUInt32BE(index, 0);
  tail.writeUInt8(last ? 1 : 0, 4);
  return { nonce: Buffer.concat([header.noncePrefix, tail]), aad: Buffer.concat([header.bytes, tail]) };
}

function validIdentity(identity: SealIdentity): void {
  if (!Number.isSafeInteger(identity.revision) || identity.revision < 1) {
    throw new HomeStoreError("INVALID_CONFIG", `invalid revision ${identity.revision}`);
  }
  if (identity.storageId === "" || Buffer.byteLength(identity.storageId) > 1024) {
    throw new HomeStoreError("INVALID_HOME_KEY", "invalid storage id");
  }
}

/** A FIFO of buffers that hands out exact byte counts without re-concatenating everything. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  take(n: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.length -= n;
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0] as Buffer;
      const used = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (used === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(used);
    }
    this.length -= n;
    return out;
  }
}

/** Plaintext in, sealed object out. Memory stays around two segments whatever the input size. */
export function createSealStream(options: SealOptions): Transform {
  validIdentity(options);
  const segmentSize = options.segmentSize ?? DEFAULT_SEGMENT_SIZE;
  if (segmentSize < 16 || segmentSize > MAX_SEGMENT_SIZE) {
    throw new HomeStoreError("INVALID_CONFIG", `invalid segment size ${segmentSize}`);
  }
  const salt = randomBytes(SALT_BYTES);
  const noncePrefix = randomBytes(PREFIX_BYTES);
  const kind = options.kind ?? "base";
  const version = kind === "delta" ? SEAL_DELTA_VERSION : SEAL_FORMAT_VERSION;
  const bytes = encodeHeader(options, segmentSize, salt, noncePrefix, version);
  options.onHeader?.({ kind, digest: headerDigest(bytes) });
  const header: Header = { bytes, segmentSize, salt, noncePrefix, ...options };
  const key = deriveKey(options.dataKey, salt, options);
  const queue = new ByteQueue();
  let index = 0;
  let headerSent = false;

  const seal = (plain: Buffer, last: boolean): Buffer => {
    if (index > MAX_SEGMENTS) throw new HomeStoreError("CHECKPOINT_TOO_LARGE", "too many segments");
    const { nonce, aad } = segmentParams(header, index, last);
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(aad);
    const body = cipher.update(plain);
    cipher.final();
    index += 1;
    return Buffer.concat([body, cipher.getAuthTag()]);
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        if (!headerSent) {
          this.push(bytes);
          headerSent = true;
        }
        queue.push(chunk);
        // A full segment is sealed as non-final only once more data proves it is not the last.
        while (queue.length > segmentSize) this.push(seal(queue.take(segmentSize), false));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        if (!headerSent) this.push(bytes);
        this.push(seal(queue.take(queue.length), true));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}

function tampered(message: string): HomeStoreError {
  return new HomeStoreError("CHECKPOINT_TAMPERED", message);
}

/**
 * Sealed object in, plaintext out — each segment only after its tag verified. The stream ends
 * successfully only after the final segment verified; consumers must not commit anything
 * before that (restore extracts into staging and swaps after the end).
 */
export function createUnsealStream(options: SealOptions): Transform {
  validIdentity(options);
  const queue = new ByteQueue();
  let header: Header | undefined;
  let key: Buffer | undefined;
  let index = 0;

  const readHeader = (): boolean => {
    if (queue.length < 7) return false;
    const head = queue.take(7);
    if (!head.subarray(0, 4).equals(MAGIC)) throw tampered("not a sealed Rakazo checkpoint");
    const version = head.readUInt8(4);
    if (version !== SEAL_FORMAT_VERSION && version !== SEAL_DELTA_VERSION) {
      throw tampered(`unknown format ${version}`);
    }
    const kind: SealKind = version === SEAL_DELTA_VERSION ? "delta" : "base";
    if (options.kind !== undefined && options.kind !== kind) {
      throw tampered(`expected a ${options.kind} object, found a ${kind}`);
    }
    const bodyLength = head.readUInt16BE(5);
    if (queue.length < bodyLength) {
      // Put the prefix back; wait for the whole header.
      const rest = queue.take(queue.length);
      queue.push(Buffer.concat([head, rest]));
      return false;
    }
    const body = queue.take(bodyLength);
    if (body.length < 4 + SALT_BYTES + PREFIX_BYTES + 8) throw tampered("truncated header");
    let o = 0;
    const segmentSize = body.readUInt32BE(o);
    o += 4;
    const salt = body.subarray(o, o + SALT_BYTES);
    o += SALT_BYTES;
    const noncePrefix = body.subarray(o, o + PREFIX_BYTES);
    o += PREFIX_BYTES;
    const revision = Number(body.readBigUInt64BE(o));
    o += 8;
    const storageId = body.subarray(o).toString("utf8");
    if (storageId !== options.storageId || revision !== options.revision) {
      throw tampered(
        `checkpoint belongs to ${JSON.stringify(storageId)}@${revision}, expected ${JSON.stringify(options.storageId)}@${options.revision}`,
      );
    }
    if (segmentSize < 16 || segmentSize > MAX_SEGMENT_SIZE) throw tampered("invalid segment size");
    header = { bytes: Buffer.concat([head, body]), segmentSize, salt, noncePrefix, revision, storageId };
    key = deriveKey(options.dataKey, salt, options);
    options.onHeader?.({ kind, digest: headerDigest(header.bytes) });
    return true;
  };

  const open = (sealed: Buffer, last: boolean): Buffer => {
    if (!header || !key) throw tampered("missing header");
    if (sealed.length < TAG_BYTES) throw tampered("truncated segment");
    const { nonce, aad } = segmentParams(header, index, last);
    const decipher = createDecipheriv("aes-256-gcm", key, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    const plain = decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES));
    try {
      decipher.final();
    } catch {
      throw tampered(`segment ${index}${last ? " (final)" : ""} failed authentication`);
    }
    index += 1;
    return plain;
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        queue.push(chunk);
        if (!header && !readHeader()) return callback();
        const full = (header as Header).segmentSize + TAG_BYTES;
        while (queue.length > full) this.push(open(queue.take(full), false));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        if (!header && !readHeader()) throw tampered("truncated header");
        this.push(open(queue.take(queue.length), true));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
