// What an RPC path answers at the HTTP level, as generic HTTP clients read it: a 401 names its
// scheme (and says when a sent token was refused), another method than POST is 405 with
// `Allow: POST`, and a body not declared JSON is 415 with a stable code.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, type TestSystem } from "../support/system.ts";

const EXTERNAL_TOKEN = `ext-${"h".repeat(40)}`;
let system: TestSystem;
let token: string;

beforeAll(async () => {
  system = await createTestSystem({ externalToken: EXTERNAL_TOKEN });
  token = (await system.newTenant("alice")).token;
});
afterAll(() => system.close());

const post = (name: string, headers: Record<string, string>, body = "{}") =>
  system.app.request(`/rpc/${name}`, { method: "POST", headers, body });
const json = { "content-type": "application/json" };
const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe("RPC paths over HTTP", () => {
  it("a 401 carries WWW-Authenticate: Bearer, invalid_token when a token was refused", async () => {
    const none = await post("space/list", json);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    expect(await codeOf(none)).toBe("UNAUTHENTICATED");

    const wrong = await post("space/list", { ...json, authorization: `Bearer rkz_${"x".repeat(43)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');

    // The two tokens are not interchangeable, either way round.
    const userOnExternal = await post("external/computer/list", {
      ...json,
      authorization: `Bearer ${token}`,
    });
    expect(userOnExternal.status).toBe(401);
    expect(userOnExternal.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    const externalOnUser = await post("space/list", { ...json, authorization: `Bearer ${EXTERNAL_TOKEN}` });
    expect(externalOnUser.status).toBe(401);

    const ok = await post("space/list", { ...json, authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("www-authenticate")).toBeNull();
  });

  it("another method on an RPC's path is 405 with Allow: POST; an unknown path stays 404", async () => {
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const res = await system.app.request("/rpc/computer/get", { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow"), method).toBe("POST");
      expect(await codeOf(res), method).toBe("METHOD_NOT_ALLOWED");
    }
    const external = await system.app.request("/rpc/external/computer/list");
    expect(external.status).toBe(405);
    expect(external.headers.get("allow")).toBe("POST");

    const unknown = await system.app.request("/rpc/computer/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("allow")).toBeNull();
    expect(await codeOf(unknown)).toBe("UNKNOWN_RPC");
  });

  it("a body not declared JSON is 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    const auth = { authorization: `Bearer ${token}` };
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ]) {
      const res = await post("space/create", { ...auth, "content-type": type }, '{"name":"Lab"}');
      expect(res.status, type).toBe(415);
      expect(await codeOf(res), type).toBe("UNSUPPORTED_MEDIA_TYPE");
    }
    const untyped = await system.app.request("/rpc/space/create", {
      method: "POST",
      headers: auth,
      body: new Blob(['{"name":"Lab"}']),
    });
    expect(untyped.status).toBe(415);
    const typed = await post(
      "space/create",
      { ...auth, "content-type": "application/json; charset=utf-8" },
      '{"name":"Lab"}',
    );
    expect(typed.status).toBe(200);
  });
});
