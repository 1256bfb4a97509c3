/**
 * Browser capabilities and gateway tickets open only in their canonical encoding (SCR-4, issue
 * 10 finding 4): `cap + "A"` or an altered last character is `malformed`, never the same screen.
 */

import { openCapability } from "@rakazo/protocol/capability";
import { describe, expect, it } from "vitest";
import { gatewayTicket, mintScreenCapability, openScreenCapability } from "./capabilities.ts";
import { gatewayKey, generateScreenKeys, parseScreenKeys } from "./keyring.ts";

const keyring = parseScreenKeys(generateScreenKeys("k1"));
const mint = () =>
  mintScreenCapability(keyring, {
    computerId: "cmp_screens",
    botId: "bot_screens",
    slot: 1,
    generation: 2,
    policy: "control",
    subject: "usr_1",
  });

/** Every non-canonical neighbour of a token: one character appended, or the last one altered. */
function neighbours(token: string): string[] {
  const last = token.at(-1) as string;
  const altered = [..."AQgw_-"].filter((c) => c !== last).map((c) => token.slice(0, -1) + c);
  return [`${token}A`, `${token}Q`, ...altered];
}

describe("canonical capability strings", () => {
  it("a browser capability opens as minted and refuses its neighbours", () => {
    const { token, claims } = mint();
    expect(openScreenCapability(keyring, token)).toMatchObject({ ok: true, claims });
    for (const other of neighbours(token)) {
      expect(openScreenCapability(keyring, other), other.slice(-3)).toMatchObject({ ok: false });
    }
  });

  it("a gateway ticket opens as sealed and refuses its neighbours", () => {
    const { claims } = mint();
    const ticket = gatewayTicket(keyring, claims);
    const keyFor = (kid: string) => gatewayKey(keyring, kid, claims.computerId);
    expect(openCapability(ticket, "gateway", keyFor)).toMatchObject({ ok: true, claims });
    for (const other of neighbours(ticket)) {
      expect(openCapability(other, "gateway", keyFor), other.slice(-3)).toMatchObject({ ok: false });
    }
  });
});
