// Generated from the RPC contracts: every RPC that needs a token refuses a missing, a malformed,
// an unknown and a revoked one with 401 UNAUTHENTICATED, before reading its input (security.md
// "Tokens and tenancy"). A new RPC is covered by adding its contract and example.
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { apiTokens } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleIds, exampleFor, MISSING_IDS } from "../support/rpc-examples.ts";
import { createTestSystem, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let ids: ExampleIds;
let revokedToken: string;
let userToken: string;
const EXTERNAL_TOKEN = `ext_${"x".repeat(40)}`;

beforeAll(async () => {
  system = await createTestSystem({ externalToken: EXTERNAL_TOKEN });
  const alice = await system.newTenant("alice");
  userToken = alice.token;
  ids = { ...MISSING_IDS, spaceId: alice.spaceId, botId: alice.botId };
  const extra = await system.client(alice.token).call("token/create", { name: "soon revoked" });
  await system.ctx.db.update(apiTokens).set({ revokedAt: new Date() }).where(eq(apiTokens.id, extra.id));
  revokedToken = extra.token;
  // The revoked token worked before: the refusals below are about revocation, not its shape.
  expect((await system.rpc("space/list", {}, alice.token)).status).toBe(200);
});
afterAll(() => system.close());

const tokenRpcs = RPC_CONTRACTS.filter((contract) => contract.auth === "token").map((c) => c.name);
const externalRpcs = RPC_CONTRACTS.filter((contract) => contract.auth === "external").map((c) => c.name);

describe("every token RPC refuses callers without a valid token", () => {
  it("covers every RPC but first-run setup, redeeming an invite and the external surface", () => {
    expect(tokenRpcs.length).toBe(RPC_CONTRACTS.length - 2 - externalRpcs.length);
  });

  const cases: [string, () => Record<string, string>][] = [
    ["no authorization header", () => ({})],
    ["a malformed bearer", () => ({ authorization: "Bearer not-a-token" })],
    ["another scheme", () => ({ authorization: `Basic ${Buffer.from("a:b").toString("base64")}` })],
    ["a well-formed unknown token", () => ({ authorization: `Bearer rkz_${"A".repeat(43)}` })],
    ["a revoked token", () => ({ authorization: `Bearer ${revokedToken}` })],
  ];

  it.each(tokenRpcs)("%s → 401 UNAUTHENTICATED", async (name) => {
    for (const [label, headers] of cases) {
      const res = await system.app.request(`/rpc/${name}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers() },
        body: JSON.stringify(exampleFor(name, ids)),
      });
      expect(res.status, `${name} with ${label}`).toBe(401);
      expect(await res.json(), `${name} with ${label}`).toEqual({
        error: { code: "UNAUTHENTICATED", message: "a valid bearer token is required" },
      });
    }
  });
});

// EXT-1: the external surface takes its one token and nothing else; that token opens nothing else.
describe("every external RPC refuses every credential but the external token", () => {
  const call = (name: string, authorization?: string) =>
    system.app.request(`/rpc/${name}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(exampleFor(name, ids)),
    });

  it.each(externalRpcs)("%s → 401 without it, with a user token or a near miss", async (name) => {
    const refused: [string, string | undefined][] = [
      ["no authorization header", undefined],
      ["a user's API token", `Bearer ${userToken}`],
      ["the token with one character changed", `Bearer ${EXTERNAL_TOKEN.slice(0, -1)}y`],
      ["the token's prefix", `Bearer ${EXTERNAL_TOKEN.slice(0, 20)}`],
    ];
    for (const [label, authorization] of refused) {
      const res = await call(name, authorization);
      expect(res.status, `${name} with ${label}`).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code, `${name} with ${label}`).toBe(
        "UNAUTHENTICATED",
      );
    }
  });

  it("the external token is refused by every user RPC", async () => {
    for (const name of tokenRpcs) {
      const res = await call(name, `Bearer ${EXTERNAL_TOKEN}`);
      expect(res.status, name).toBe(401);
    }
  });

  it("without EXTERNAL_COMPUTER_TOKEN the surface does not exist", async () => {
    const off = await createTestSystem();
    try {
      for (const name of externalRpcs) {
        const res = await off.app.request(`/rpc/${name}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${EXTERNAL_TOKEN}` },
          body: JSON.stringify(exampleFor(name, ids)),
        });
        expect(res.status, name).toBe(404);
        expect(((await res.json()) as { error: { code: string } }).error.code, name).toBe("UNKNOWN_RPC");
        // Nor under another method: no 405 tells a stranger the path is served.
        expect((await off.app.request(`/rpc/${name}`)).status, `GET ${name}`).toBe(404);
      }
    } finally {
      await off.close();
    }
  });
});
