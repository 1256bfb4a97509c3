// Bad input never yields a 500 or a stack trace: each case gets a 4xx with a stable code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let token: string;
let spaceId: string;

beforeAll(async () => {
  system = await createTestSystem();
  ({ token, spaceId } = await system.newTenant("alice"));
});
afterAll(() => system.close());

function expectCleanError(res: { status: number; json: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.json.error.code).toBe(code);
  expect(JSON.stringify(res.json)).not.toMatch(/\bat .+:\d+:\d+|node_modules|\.ts:\d+/);
}

describe("bad input gets a 4xx with a stable code", () => {
  it("malformed JSON → 400 INVALID_JSON", async () => {
    expectCleanError(await system.rpc("computer/list", "{not json", token), 400, "INVALID_JSON");
  });

  it("unknown RPC → 404 UNKNOWN_RPC", async () => {
    expectCleanError(await system.rpc("computer/teleport", {}, token), 404, "UNKNOWN_RPC");
  });

  it("GET on an RPC path → 405 METHOD_NOT_ALLOWED, Allow: POST", async () => {
    const res = await system.app.request("/rpc/computer/list");
    expect(res.headers.get("allow")).toBe("POST");
    expectCleanError({ status: res.status, json: await res.json() }, 405, "METHOD_NOT_ALLOWED");
  });

  it("wrong field types → 400 INVALID_INPUT naming the field", async () => {
    const res = await system.rpc("computer/create", { spaceId, mode: 42 }, token);
    expectCleanError(res, 400, "INVALID_INPUT");
    expect(res.json.error.details.issues.map((i: { path: string }) => i.path)).toContain("mode");
  });

  it("every field error is reported at once, not one at a time", async () => {
    const res = await system.rpc(
      "computer/exec",
      { computerId: "nope", argv: [], timeoutMs: -1, env: { "1BAD": "x" }, extra: true },
      token,
    );
    expectCleanError(res, 400, "INVALID_INPUT");
    const paths = res.json.error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["computerId", "argv", "timeoutMs", "env.1BAD"]));
    expect(res.json.error.details.issues.map((i: { message: string }) => i.message).join(" ")).toContain(
      "extra",
    );
  });

  it("unexpected fields → 400 INVALID_INPUT", async () => {
    expectCleanError(
      await system.rpc("computer/list", { spaceId, extra: true }, token),
      400,
      "INVALID_INPUT",
    );
  });

  it("a JSON array body → 400 INVALID_INPUT", async () => {
    expectCleanError(await system.rpc("computer/list", "[1,2]", token), 400, "INVALID_INPUT");
  });

  it("exec with an empty argv → 400 INVALID_INPUT", async () => {
    const res = await system.rpc("computer/exec", { computerId: `cmp_${"a".repeat(20)}`, argv: [] }, token);
    expectCleanError(res, 400, "INVALID_INPUT");
  });

  it("missing token → 401 UNAUTHENTICATED", async () => {
    expectCleanError(await system.rpc("computer/list", { spaceId }), 401, "UNAUTHENTICATED");
  });

  it("wrong token → 401 UNAUTHENTICATED", async () => {
    const forged = `rkz_${"A".repeat(43)}`;
    expectCleanError(await system.rpc("computer/list", { spaceId }, forged), 401, "UNAUTHENTICATED");
  });

  it("malformed Authorization header → 401 UNAUTHENTICATED", async () => {
    const res = await system.app.request("/rpc/computer/list", {
      method: "POST",
      headers: { authorization: `Basic ${token}` },
      body: JSON.stringify({ spaceId }),
    });
    expectCleanError({ status: res.status, json: await res.json() }, 401, "UNAUTHENTICATED");
  });

  it("unknown route → 404 NOT_FOUND", async () => {
    const res = await system.app.request("/nowhere");
    expectCleanError({ status: res.status, json: await res.json() }, 404, "NOT_FOUND");
  });

  it("exec on a computer that is not running yet → 409 COMPUTER_NOT_READY", async () => {
    const created = await system.rpc("computer/create", { spaceId }, token);
    const res = await system.rpc(
      "computer/exec",
      { computerId: created.json.result.id, argv: ["true"] },
      token,
    );
    expectCleanError(res, 409, "COMPUTER_NOT_READY");
  });
});
