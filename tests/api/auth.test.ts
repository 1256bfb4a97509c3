// First-run setup and bearer tokens: stored only as hashes, compared in constant time,
// never logged (security.md "Tokens and tenancy").
import { apiTokens } from "@rakazo/db";
import { eq } from "drizzle-orm";
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

  it("token/list shows the caller's live tokens with kind, times and which one is calling — never a secret", async () => {
    const s = await system();
    const { token } = (await s.rpc("setup/bootstrap", {})).json.result;
    const ci = (await s.rpc("token/create", { name: "ci" }, token)).json.result;
    expect(ci).toMatchObject({ kind: "api", expiresAt: null });
    const before = Date.now();
    const web = (await s.rpc("token/create", { name: "web session", kind: "web_session" }, token)).json
      .result;
    // A web session ends 12 hours after it was minted unless told otherwise.
    const expires = Date.parse(web.expiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(12 * 3_600_000 - 1_000);
    expect(expires - before).toBeLessThanOrEqual(12 * 3_600_000 + 5_000);

    const listed = await s.rpc("token/list", {}, ci.token);
    expect(listed.status).toBe(200);
    const rows = listed.json.result as { id: string; name: string; kind: string; current: boolean }[];
    expect(rows.map((t) => [t.name, t.kind, t.current])).toEqual([
      ["web session", "web_session", false],
      ["ci", "api", true],
      ["bootstrap", "api", false],
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/rkz_|secret|hash/i);
    // Authenticating marks the token used.
    expect(listed.json.result[1].lastUsedAt).not.toBeNull();
    expect(listed.json.result[0].lastUsedAt).toBeNull();
  });

  it("token/revoke with a tokenId revokes that token of the caller's; then it is gone from the list", async () => {
    const s = await system();
    const { token } = (await s.rpc("setup/bootstrap", {})).json.result;
    const ci = (await s.rpc("token/create", { name: "ci" }, token)).json.result;
    const revoked = await s.rpc("token/revoke", { tokenId: ci.id }, token);
    expect(revoked.json.result).toEqual({ revoked: true, tokenId: ci.id });
    expect((await s.rpc("space/list", {}, ci.token)).json.error.code).toBe("UNAUTHENTICATED");
    expect((await s.rpc("space/list", {}, token)).status).toBe(200);
    const ids = (await s.rpc("token/list", {}, token)).json.result.map((t: { id: string }) => t.id);
    expect(ids).not.toContain(ci.id);
    // Revoking it again, or a malformed id: refused with a stable code.
    expect((await s.rpc("token/revoke", { tokenId: ci.id }, token)).json.error.code).toBe("NOT_FOUND");
    expect((await s.rpc("token/revoke", { tokenId: "nope" }, token)).json.error.code).toBe("INVALID_INPUT");
  });

  it("an expired token is refused and no longer listed", async () => {
    const s = await system();
    const { token } = (await s.rpc("setup/bootstrap", {})).json.result;
    const brief = (await s.rpc("token/create", { name: "brief", ttlSeconds: 60 }, token)).json.result;
    expect((await s.rpc("space/list", {}, brief.token)).status).toBe(200);
    await s.ctx.db
      .update(apiTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(apiTokens.id, brief.id));
    expect((await s.rpc("space/list", {}, brief.token)).json.error.code).toBe("UNAUTHENTICATED");
    const ids = (await s.rpc("token/list", {}, token)).json.result.map((t: { id: string }) => t.id);
    expect(ids).not.toContain(brief.id);
    expect((await s.rpc("token/create", { name: "x", ttlSeconds: 5 }, token)).json.error.code).toBe(
      "INVALID_INPUT",
    );
  });

  it("/health answers with the active provider", async () => {
    const s = await system();
    const res = await s.app.request("/health");
    expect(await res.json()).toEqual({ status: "ok", provider: "fake" });
  });
});
