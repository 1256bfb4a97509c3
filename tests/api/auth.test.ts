// First-run setup and bearer tokens: stored only as hashes, compared in constant time,
// never logged (security.md "Tokens and tenancy").
import { apiTokens } from "@rakazo/db";
import { afterAll, describe, expect, it } from "vitest";
import { createTestSystem, type TestSystem } from "../support/system.ts";

const systems: TestSystem[] = [];
afterAll(async () => {
  for (const s of systems) await s.close();
});

async function system(options: { bootstrapToken?: string } = {}) {
  const s = await createTestSystem(options);
  systems.push(s);
  return s;
}

describe("setup/bootstrap", () => {
  it("creates the first user with a space, a bot and a working token — once", async () => {
    const s = await system();
    const first = await s.rpc("setup/bootstrap", { userName: "root", spaceName: "Acme", botName: "Ada" });
    expect(first.status).toBe(200);
    const { token, spaceId, botId } = first.json.result;
    expect(token).toMatch(/^rkz_[A-Za-z0-9]{43}$/);
    expect(botId).toMatch(/^bot_/);
    const spaces = await s.rpc("space/list", {}, token);
    expect(spaces.json.result).toEqual([{ id: spaceId, name: "Acme", role: "owner" }]);

    const second = await s.rpc("setup/bootstrap", {});
    expect(second.status).toBe(409);
    expect(second.json.error.code).toBe("ALREADY_BOOTSTRAPPED");
  });

  it("concurrent first-run claims: exactly one wins", async () => {
    const s = await system();
    const results = await Promise.all(Array.from({ length: 8 }, () => s.rpc("setup/bootstrap", {})));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.json.error?.code === "ALREADY_BOOTSTRAPPED")).toHaveLength(7);
  });

  it("with BOOTSTRAP_TOKEN configured, setup needs it", async () => {
    const s = await system({ bootstrapToken: "let-me-in-please" });
    expect((await s.rpc("setup/bootstrap", {})).json.error.code).toBe("UNAUTHENTICATED");
    expect((await s.rpc("setup/bootstrap", {}, "wrong-token")).json.error.code).toBe("UNAUTHENTICATED");
    expect((await s.rpc("setup/bootstrap", {}, "let-me-in-please")).status).toBe(200);
  });
});

describe("API tokens", () => {
  it("are stored only as SHA-256 hashes and never appear in logs", async () => {
    const s = await system();
    const { token } = (await s.rpc("setup/bootstrap", {})).json.result;
    const extra = await s.rpc("token/create", { name: "ci" }, token);
    expect(extra.json.result.token).toMatch(/^rkz_/);
    expect((await s.rpc("space/list", {}, extra.json.result.token)).status).toBe(200);

    const rows = await s.ctx.db.select().from(apiTokens);
    expect(rows).toHaveLength(2);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(extra.json.result.token);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.secretHash))).toBe(true);

    await s.rpc("space/list", {}, `${token.slice(0, -1)}x`);
    const logs = s.logLines.join("\n");
    expect(s.logLines.length).toBeGreaterThan(3);
    expect(logs).not.toContain(token.slice(4));
    expect(logs).not.toContain(extra.json.result.token.slice(4));
  });

  it("token/revoke revokes only the calling token (the web app's sign-out)", async () => {
    const s = await system();
    const { token } = (await s.rpc("setup/bootstrap", {})).json.result;
    const session = (await s.rpc("token/create", { name: "web session" }, token)).json.result;
    const revoked = await s.rpc("token/revoke", {}, session.token);
    expect(revoked.json.result).toEqual({ revoked: true, tokenId: session.id });
    expect((await s.rpc("space/list", {}, session.token)).json.error.code).toBe("UNAUTHENTICATED");
    expect((await s.rpc("space/list", {}, token)).status).toBe(200);
  });

  it("/health answers with the active provider", async () => {
    const s = await system();
    const res = await s.app.request("/health");
    expect(await res.json()).toEqual({ status: "ok", provider: "fake" });
  });
});
