// GET /openapi.json is generated from the RPC contracts: every RPC is in it, every schema is
// valid JSON Schema 2020-12, error statuses come from the one code→status map, and real
// answers of the running API validate against the published schemas.
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let doc: any;
// Formats (date-time, …) are annotations here; strict mode still rejects unknown keywords.
const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });

beforeAll(async () => {
  system = await createTestSystem();
  const res = await system.app.request("/openapi.json");
  expect(res.status).toBe(200);
  doc = await res.json();
});
afterAll(() => system.close());

const operation = (name: string) => doc.paths[`/rpc/${name}`]?.post;

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document with bearer auth and exactly the registry's RPCs", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.bearerAuth).toEqual({ type: "http", scheme: "bearer" });
    expect(Object.keys(doc.paths).sort()).toEqual(RPC_CONTRACTS.map((c) => `/rpc/${c.name}`).sort());
    for (const contract of RPC_CONTRACTS) {
      const op = operation(contract.name);
      expect(Object.keys(doc.paths[`/rpc/${contract.name}`])).toEqual(["post"]);
      expect(op.security, contract.name).toContainEqual({ bearerAuth: [] });
      if (contract.auth === "token") expect(op.security, contract.name).toEqual([{ bearerAuth: [] }]);
    }
  });

  it("every request and response schema is valid JSON Schema draft 2020-12", () => {
    let checked = 0;
    for (const contract of RPC_CONTRACTS) {
      const op = operation(contract.name);
      const schemas = [
        op.requestBody.content["application/json"].schema,
        ...Object.values(op.responses).map((r: any) => r.content["application/json"].schema),
      ];
      for (const schema of schemas) {
        expect(ajv.validateSchema(schema), `${contract.name}: ${ajv.errorsText()}`).toBe(true);
        ajv.compile(schema);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(RPC_CONTRACTS.length * 2);
  });

  it("error responses use the statuses of http-errors.ts", () => {
    const responses = operation("computer/get").responses;
    const codesAt = (status: string) =>
      responses[status].content["application/json"].schema.properties.error.properties.code.enum;
    expect(codesAt("401")).toEqual(["UNAUTHENTICATED"]);
    expect(codesAt("404")).toEqual(expect.arrayContaining(["NOT_FOUND", "UNKNOWN_RPC", "FILE_NOT_FOUND"]));
    expect(codesAt("409")).toContain("COMPUTER_NOT_READY");
    expect(codesAt("400")).toEqual(expect.arrayContaining(["INVALID_INPUT", "INVALID_JSON"]));
  });

  it("real answers validate against the published schemas", async () => {
    await system.startWorker();
    const alice = await system.newTenant("alice");
    const computerId = await runningComputer(system, alice);
    const answers: [string, unknown, string][] = [
      ["computer/get", { computerId }, "200"],
      ["computer/list", { spaceId: alice.spaceId }, "200"],
      ["run/start", { computerId, botId: alice.botId }, "200"],
      ["computer/files/list", { computerId }, "200"],
      ["computer/get", { computerId: `cmp_${"z".repeat(20)}` }, "404"],
      ["computer/get", { computerId: 7 }, "400"],
    ];
    for (const [name, body, status] of answers) {
      const res = await system.rpc(name, body, alice.token);
      expect(String(res.status), name).toBe(status);
      const schema = operation(name).responses[status].content["application/json"].schema;
      const validate = ajv.compile(schema);
      expect(validate(res.json), `${name} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});
