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

beforeAll(async () => {
  system = await createTestSystem();
  const alice = await system.newTenant("alice");
  ids = { ...MISSING_IDS, spaceId: alice.spaceId, botId: alice.botId };
  const extra = await system.client(alice.token).call("token/create", { name: "soon revoked" });
  await system.ctx.db.update(apiTokens).set({ revokedAt: new Date() }).where(eq(apiTokens.id, extra.id));
  revokedToken = extra.token;
  // The revoked token worked before: the refusals below are about revocation, not its shape.
  expect((await system.rpc("space/list", {}, alice.token)).status).toBe(200);
});
afterAll(() => system.close());

const tokenRpcs = RPC_CONTRACTS.filter((contract) => contract.auth === "token").map((c) => c.name);

describe("every token RPC refuses callers without a valid token", () => {
  it("covers every RPC but first-run setup", () => {
    expect(tokenRpcs.length).toBe(RPC_CONTRACTS.length - 1);
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
