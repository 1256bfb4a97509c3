/**
 * The capability codec accepts only the canonical encoding of a sealed token (SCR-4): one extra
 * or altered trailing character is refused, not silently decoded to the same bytes. Tickets use
 * the same codec with purpose `gateway`.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newCapabilityId, openCapability, type ScreenClaims, sealCapability } from "./capability-codec.ts";

const key = randomBytes(32);
const now = Date.now();
const claims: ScreenClaims = {
  id: newCapabilityId(),
  computerId: "cmp_codec",
  botId: "bot_codec",
  slot: 0,
  generation: 1,
  policy: "view",
  subject: "usr_1",
  issuedAt: now,
  expiresAt: now + 60_000,
};
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

describe.each(["url", "gateway"] as const)("capability codec, purpose %s", (purpose) => {
  const open = (token: string) => openCapability(token, purpose, () => key, now);

  it("opens the token it sealed", () => {
    const token = sealCapability(key, "k1", purpose, claims);
    expect(open(token)).toEqual({ ok: true, claims, kid: "k1" });
  });

  it("refuses the token with one character appended", () => {
    // Many seals, so the payload length modulo 4 varies (AES-GCM keeps the JSON's length).
    for (let i = 0; i < 8; i += 1) {
      const token = sealCapability(key, "k1", purpose, { ...claims, subject: "u".repeat(i + 1) });
      for (const extra of ["A", "Q", "w", "_"]) {
        const verdict = open(token + extra);
        expect(verdict.ok, `${token.length % 4} + ${extra}`).toBe(false);
      }
    }
  });

  it("refuses every alteration of the last character", () => {
    for (let i = 0; i < 8; i += 1) {
      const token = sealCapability(key, "k1", purpose, { ...claims, subject: "v".repeat(i + 1) });
      const last = token.at(-1) as string;
      for (const c of B64URL) {
        if (c === last) continue;
        expect(open(token.slice(0, -1) + c).ok, `${last} → ${c}`).toBe(false);
      }
    }
  });
});
