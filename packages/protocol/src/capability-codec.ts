/**
 * Screen capability codec (SCR-2, SCR-4): sealed, expiring claims with a key id for rotation.
 * The one implementation, shared by the API (`@rakazo/screens` imports this file) and the
 * in-computer gateway, so it stays Node-builtins-only.
 *
 * Token: `rs1.<kid>.<base64url(nonce[12] ‖ ciphertext ‖ tag[16])>`, AES-256-GCM, with
 * `rs1.<kid>.<purpose>` as additional data: the version, the key id and the purpose are
 * authenticated, so a token sealed for one purpose (a browser URL) never opens as another (a
 * gateway ticket) even under the same key. Nonces are random per seal (96 bits); keys are
 * derived per purpose and per computer (`deriveScreenKey`), so one key seals few tokens.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export const CAPABILITY_VERSION = "rs1";
/**
 * `view` and `control` open the screen (`/v1/rfb`); `terminal` opens only the PTY server
 * (`/v1/pty`, TRM-4) and is minted only for a control lease holder.
 */
export type ScreenPolicy = "view" | "control" | "terminal";
export const SCREEN_POLICIES: readonly ScreenPolicy[] = ["view", "control", "terminal"];
export type CapabilityPurpose = "url" | "gateway";

export interface ScreenClaims {
  /** Random capability id (revocation handle). */
  readonly id: string;
  readonly computerId: string;
  readonly botId: string;
  readonly slot: number;
  readonly generation: number;
  readonly policy: ScreenPolicy;
  /** Who the capability was minted for (a user id); revocation can select on it. */
  readonly subject: string;
  /** Milliseconds since the epoch. */
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export type OpenFailure = "malformed" | "unknown_key" | "forged" | "expired";
export type OpenResult =
  | { readonly ok: true; readonly claims: ScreenClaims; readonly kid: string }
  | { readonly ok: false; readonly reason: OpenFailure };

const KID = /^[A-Za-z0-9_-]{1,32}$/;
const ID = /^[A-Za-z0-9_-]{16,64}$/;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Tokens longer than this are refused before any crypto runs. */
export const MAX_TOKEN_CHARS = 2048;

export function isKeyId(kid: string): boolean {
  return KID.test(kid);
}

/** A fresh random capability id: 128 bits, base64url. */
export function newCapabilityId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * The key for one purpose and context from a 32-byte master key: HKDF-SHA256. Gateway keys
 * use the computer id as context, so a computer that reads its own key (its processes can)
 * cannot seal tickets for any other computer.
 */
export function deriveScreenKey(master: Uint8Array, purpose: CapabilityPurpose, context: string): Buffer {
  if (master.length !== 32) throw new Error("screen master keys are 32 bytes");
  return Buffer.from(
    hkdfSync("sha256", master, "rakazo-screens-v1", `${purpose}\u0000${context}`, 32) as ArrayBuffer,
  );
}

function aad(kid: string, purpose: CapabilityPurpose): Buffer {
  return Buffer.from(`${CAPABILITY_VERSION}.${kid}.${purpose}`);
}

export function sealCapability(
  key: Uint8Array,
  kid: string,
  purpose: CapabilityPurpose,
  claims: ScreenClaims,
): string {
  if (key.length !== 32) throw new Error("capability keys are 32 bytes");
  if (!isKeyId(kid)) throw new Error("invalid key id");
  if (!validClaims(claims)) throw new Error("invalid capability claims");
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(aad(kid, purpose));
  const body = Buffer.from(
    JSON.stringify([
      claims.id,
      claims.computerId,
      claims.botId,
      claims.slot,
      claims.generation,
      claims.policy,
      claims.subject,
      claims.issuedAt,
      claims.expiresAt,
    ]),
  );
  const sealed = Buffer.concat([nonce, cipher.update(body), cipher.final(), cipher.getAuthTag()]);
  return `${CAPABILITY_VERSION}.${kid}.${sealed.toString("base64url")}`;
}

/** The key id of a token, without opening it (to pick the key); undefined when malformed. */
export function capabilityKeyId(token: string): string | undefined {
  if (typeof token !== "string" || token.length > MAX_TOKEN_CHARS) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== CAPABILITY_VERSION || !isKeyId(parts[1] ?? "")) return undefined;
  return parts[1];
}

/**
 * Opens a token: `keyFor(kid)` returns the key for that id (or undefined). Authentication
 * failure, a wrong purpose and a wrong key all read as `forged`; expiry is checked last, after
 * the seal verified.
 */
export function openCapability(
  token: string,
  purpose: CapabilityPurpose,
  keyFor: (kid: string) => Uint8Array | undefined,
  now: number = Date.now(),
): OpenResult {
  const kid = capabilityKeyId(token);
  if (kid === undefined) return { ok: false, reason: "malformed" };
  const payload = token.slice(CAPABILITY_VERSION.length + kid.length + 2);
  if (!/^[A-Za-z0-9_-]+$/.test(payload)) return { ok: false, reason: "malformed" };
  const sealed = Buffer.from(payload, "base64url");
  // Only the canonical encoding opens: Node's decoder ignores a dangling last character and
  // unused low bits, so without this `token + "A"` (or an altered last character) would open
  // the same capability and sidestep anything that compares the string (deny lists, scrubbers).
  if (sealed.toString("base64url") !== payload) return { ok: false, reason: "malformed" };
  if (sealed.length < NONCE_BYTES + TAG_BYTES + 2) return { ok: false, reason: "malformed" };
  const key = keyFor(kid);
  if (key?.length !== 32) return { ok: false, reason: "unknown_key" };
  let body: Buffer;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, NONCE_BYTES));
    decipher.setAAD(aad(kid, purpose));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    body = Buffer.concat([
      decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    return { ok: false, reason: "forged" };
  }
  const claims = decodeClaims(body);
  // Authentic but not our shape: only a sealer bug can do this; refuse it all the same.
  if (!claims) return { ok: false, reason: "malformed" };
  if (claims.expiresAt <= now) return { ok: false, reason: "expired" };
  return { ok: true, claims, kid };
}

function decodeClaims(body: Buffer): ScreenClaims | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 9) return undefined;
  const [id, computerId, botId, slot, generation, policy, subject, issuedAt, expiresAt] = value;
  const claims = {
    id,
    computerId,
    botId,
    slot,
    generation,
    policy,
    subject,
    issuedAt,
    expiresAt,
  } as ScreenClaims;
  return validClaims(claims) ? claims : undefined;
}

const shortString = (v: unknown): boolean => typeof v === "string" && v.length > 0 && v.length <= 128;

export function validClaims(claims: ScreenClaims): boolean {
  return (
    typeof claims.id === "string" &&
    ID.test(claims.id) &&
    shortString(claims.computerId) &&
    shortString(claims.botId) &&
    typeof claims.subject === "string" &&
    claims.subject.length <= 128 &&
    Number.isInteger(claims.slot) &&
    claims.slot >= 0 &&
    claims.slot < 100_000 &&
    Number.isInteger(claims.generation) &&
    claims.generation >= 1 &&
    SCREEN_POLICIES.includes(claims.policy) &&
    Number.isSafeInteger(claims.issuedAt) &&
    Number.isSafeInteger(claims.expiresAt)
  );
}
