// GET /openapi.json is generated from the RPC contracts: every RPC is in it with its own
// token scheme, summary, description and error codes, every schema is valid (and portable)
// JSON Schema 2020-12, error statuses come from the one code→status map, and real answers of
// the running API validate against the published schemas.

import { answeredCodes } from "@rakazo/api/openapi";
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
  it("is an OpenAPI 3.1 document with exactly the registry's RPCs, each secured by its own token", () => {
    expect(doc.openapi).toBe("3.1.0");
    const schemes = doc.components.securitySchemes;
    expect(Object.keys(schemes).sort()).toEqual(["externalToken", "setupToken", "userToken"]);
    for (const scheme of Object.values(schemes) as any[]) {
      expect(scheme).toMatchObject({ type: "http", scheme: "bearer" });
      expect(scheme.description.length).toBeGreaterThan(40);
    }
    expect(doc.security).toBeUndefined();
    expect(Object.keys(doc.paths).sort()).toEqual(RPC_CONTRACTS.map((c) => `/rpc/${c.name}`).sort());
    const expected = {
      token: [{ userToken: [] }],
      external: [{ externalToken: [] }],
      bootstrap: [{}, { setupToken: [] }],
      invite: [{}],
    };
    for (const contract of RPC_CONTRACTS) {
      expect(Object.keys(doc.paths[`/rpc/${contract.name}`])).toEqual(["post"]);
      expect(operation(contract.name).security, contract.name).toEqual(expected[contract.auth]);
    }
    expect(operation("external/computer/exec").security).toEqual([{ externalToken: [] }]);
  });

  it("serves relative to itself", () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })]);
  });

  it("requires a body wherever {} is not a valid input", () => {
    for (const contract of RPC_CONTRACTS) {
      const emptyAllowed = contract.input.safeParse({}).success;
      expect(operation(contract.name).requestBody.required, contract.name).toBe(!emptyAllowed);
    }
    expect(operation("computer/get").requestBody.required).toBe(true);
    expect(operation("token/revoke").requestBody.required).toBe(false);
  });

  it("every RPC has the summary and description its contract writes, preconditions included", () => {
    for (const contract of RPC_CONTRACTS) {
      const op = operation(contract.name);
      expect(op.summary, contract.name).toBe(contract.summary);
      expect(op.summary.length, contract.name).toBeGreaterThan(5);
      expect(op.description, contract.name).toBe(contract.description);
    }
    expect(operation("computer/files/write").description).toMatch(/control lease/);
    expect(operation("computer/files/upload").description).toMatch(/control lease/);
    expect(operation("computer/terminalUrl").description).toMatch(/control lease/);
    expect(operation("token/revoke").description).toMatch(/`\{\}`.*the token making this call/);
    // Field notes are the contract's `.describe()`, published with the field.
    const input = (name: string) => operation(name).requestBody.content["application/json"].schema.properties;
    expect(input("external/process/read").since.description).toMatch(/Byte offset/);
    expect(input("computer/create").size.description).toMatch(/QUOTA_EXCEEDED/);
    expect(input("computer/observe").controlToken.description).toMatch(/control lease/);
  });

  it("lists for each RPC only the codes it can answer", () => {
    for (const contract of RPC_CONTRACTS) {
      const listed = Object.values(operation(contract.name).responses)
        .flatMap(
          (r: any) => r.content["application/json"].schema.properties.error?.properties.code.enum ?? [],
        )
        .sort();
      expect(listed, contract.name).toEqual(answeredCodes(contract).sort());
    }
    const codes = (name: string) => JSON.stringify(operation(name).responses);
    expect(codes("space/list")).not.toContain("COMPUTER_NOT_READY");
    expect(codes("space/list")).not.toContain("NOT_SERVER_OWNER");
    expect(codes("computer/releaseInterrupted")).toContain("NOT_SERVER_OWNER");
    expect(codes("computer/get")).not.toContain("UNKNOWN_RPC");
    expect(codes("external/computer/list")).toContain("UNKNOWN_RPC");
    expect(operation("computer/get").responses["401"].headers["WWW-Authenticate"]).toBeDefined();
  });

  it("has portable schemas: no ±2^53 bounds, no date-time regex, ASCII patterns", () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
    const patterns: string[] = [];
    const walk = (node: unknown): void => {
      if (typeof node !== "object" || node === null) return;
      const schema = node as Record<string, unknown>;
      if (typeof schema.pattern === "string") {
        expect(schema.format, schema.pattern).not.toBe("date-time");
        patterns.push(schema.pattern);
      }
      for (const child of Object.values(schema)) walk(child);
    };
    walk(doc.paths);
    expect(patterns.length).toBeGreaterThan(10);
    for (const pattern of patterns) {
      expect(pattern, pattern).toMatch(/^[\x20-\x7e]*$/);
      expect(pattern, pattern).not.toMatch(/\\p\{/);
    }
    // An explicit bound stays.
    const limit =
      operation("computer/attachments/list").requestBody.content["application/json"].schema.properties.limit;
    expect(limit).toMatchObject({ type: "integer", minimum: 1, maximum: 200 });
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
    const responses = operation("computer/exec").responses;
    const codesAt = (status: string) =>
      responses[status].content["application/json"].schema.properties.error.properties.code.enum;
    expect(codesAt("401")).toEqual(["UNAUTHENTICATED"]);
    expect(codesAt("404")).toEqual(expect.arrayContaining(["NOT_FOUND", "FILE_NOT_FOUND"]));
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
