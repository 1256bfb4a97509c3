// Generated from the RPC contracts: every RPC refuses malformed input with 400 INVALID_INPUT
// and details naming the offending fields, before its verb runs. A new RPC is covered by
// adding its contract and example.
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleIds, exampleFor, MISSING_IDS } from "../support/rpc-examples.ts";
import { createTestSystem, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let userToken: string;
const EXTERNAL_TOKEN = `ext_${"e".repeat(40)}`;
/** Each RPC is called with the token its auth kind accepts, so only its input is at fault. */
const tokenFor = (name: string) =>
  RPC_CONTRACTS.find((c) => c.name === name)?.auth === "external" ? EXTERNAL_TOKEN : userToken;
let ids: ExampleIds;
/** The input's JSON Schema as GET /openapi.json publishes it, per RPC. */
let requestSchemas: Map<string, { required?: string[] }>;

beforeAll(async () => {
  system = await createTestSystem({ externalToken: EXTERNAL_TOKEN });
  const alice = await system.newTenant("alice");
  userToken = alice.token;
  ids = { ...MISSING_IDS, spaceId: alice.spaceId, botId: alice.botId };
  const doc: any = await (await system.app.request("/openapi.json")).json();
  requestSchemas = new Map(
    RPC_CONTRACTS.map((c) => [
      c.name,
      doc.paths[`/rpc/${c.name}`].post.requestBody.content["application/json"].schema,
    ]),
  );
});
afterAll(() => system.close());

type Issue = { path: string; message: string };

function expectInvalid(res: { status: number; json: any }, what: string): Issue[] {
  expect(res.status, what).toBe(400);
  expect(res.json.error.code, what).toBe("INVALID_INPUT");
  expect(Array.isArray(res.json.error.details?.issues), what).toBe(true);
  return res.json.error.details.issues;
}

/** A value of the wrong JSON type for `value`'s field. */
function wrongTyped(value: unknown): unknown {
  if (typeof value === "string") return 42;
  if (typeof value === "number") return "42";
  if (typeof value === "boolean") return "yes";
  return "not-an-object";
}

const names = RPC_CONTRACTS.map((c) => c.name);

describe("every RPC refuses malformed input with INVALID_INPUT", () => {
  it.each(names)("%s: {} names every required field", async (name) => {
    const required = requestSchemas.get(name)?.required ?? [];
    // No required field (space/list, setup/bootstrap): {} is valid input, not a refusal.
    if (required.length === 0) return;
    const issues = expectInvalid(await system.rpc(name, {}, tokenFor(name)), `${name} with {}`);
    expect(issues.map((i) => i.path).sort()).toEqual([...required].sort());
  });

  it.each(names)("%s: a wrong-typed or unknown field is named", async (name) => {
    const example = exampleFor(name, ids);
    const [field] = Object.keys(example);
    if (field === undefined) {
      const issues = expectInvalid(
        await system.rpc(name, { unexpected: 1 }, tokenFor(name)),
        `${name} + unknown key`,
      );
      expect(JSON.stringify(issues)).toContain("unexpected");
      return;
    }
    const body = { ...example, [field]: wrongTyped(example[field]) };
    const issues = expectInvalid(
      await system.rpc(name, body, tokenFor(name)),
      `${name} with ${field} mistyped`,
    );
    expect(issues.map((i) => i.path)).toContain(field);
  });

  it.each(names)("%s: a body that is not an object", async (name) => {
    expectInvalid(await system.rpc(name, ["computerId"], tokenFor(name)), `${name} with an array`);
  });
});
