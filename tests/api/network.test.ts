// A computer's network policy in the control plane — set at create, shown by
// computer/get, changed only while no machine runs, recorded in activity, handed to the
// provider at provision, and refused with UNSUPPORTED where the provider cannot enforce it.
import { createFakeProvider, type ProvisionRequest } from "@rakazo/sandbox";
import { createSpace, listComputers, resolveCreatePolicy } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
const provisions: ProvisionRequest[] = [];
const ALLOW = { mode: "allowlist", allow: [{ host: "Docs.Example.com.", ports: [443, 443, 80] }] };

beforeAll(async () => {
  system = await createTestSystem({
    provider: async (rootDir) => {
      const fake = createFakeProvider({ rootDir });
      return {
        ...fake,
        provision: (request) => {
          provisions.push(request);
          return fake.provision(request);
        },
      };
    },
  });
  tenant = await system.newTenant("netter");
  await system.startWorker();
});
afterAll(() => system.close());

const running = (computerId: string) =>
  eventually(async () => {
    const got = await system.rpc("computer/get", { computerId }, tenant.token);
    return got.json.result?.state === "running" ? got.json.result : undefined;
  });

describe("network policy", () => {
  it("defaults to none, as every computer ran before", async () => {
    const created = await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token);
    expect(created.json.result.network).toEqual({ mode: "none" });
    const request = await eventually(async () =>
      provisions.find((p) => p.computerId === created.json.result.id),
    );
    expect(request.network).toEqual({ mode: "none" });
  });

  it("stores the policy given at create, normalized, and provisions with it", async () => {
    const created = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, network: ALLOW },
      tenant.token,
    );
    expect(created.status).toBe(200);
    const expected = { mode: "allowlist", allow: [{ host: "docs.example.com", ports: [80, 443] }] };
    expect(created.json.result.network).toEqual(expected);
    const { id } = created.json.result;
    const got = await running(id);
    expect(got.network).toEqual(expected);
    const request = provisions.find((p) => p.computerId === id);
    expect(request?.network).toEqual(expected);
  });

  it("refuses malformed policies with INVALID_INPUT", async () => {
    for (const network of [
      { mode: "everything" },
      { mode: "egress", allow: [{ host: "a.test" }] },
      { mode: "allowlist", allow: [{ host: "bad host!" }] },
      { mode: "allowlist", allow: [{ host: "a.test", ports: [0] }] },
    ]) {
      const answer = await system.rpc("computer/create", { spaceId: tenant.spaceId, network }, tenant.token);
      expect(answer.json.error?.code, JSON.stringify(network)).toBe("INVALID_INPUT");
    }
  });

  it("changes only while stopped (CONFLICT while running), applies at the next start, and is in activity", async () => {
    const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json
      .result;
    await running(id);
    const refused = await system.rpc(
      "computer/setNetwork",
      { computerId: id, network: { mode: "egress" } },
      tenant.token,
    );
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: "CONFLICT", details: { state: "running" } });
    expect((await system.rpc("computer/get", { computerId: id }, tenant.token)).json.result.network).toEqual({
      mode: "none",
    });

    await system.rpc("computer/stop", { computerId: id }, tenant.token);
    await eventually(async () => {
      const got = await system.rpc("computer/get", { computerId: id }, tenant.token);
      return got.json.result.state === "stopped" ? true : undefined;
    });
    const changed = await system.rpc(
      "computer/setNetwork",
      { computerId: id, network: { mode: "egress" } },
      tenant.token,
    );
    expect(changed.status).toBe(200);
    expect(changed.json.result.network).toEqual({ mode: "egress" });

    provisions.length = 0;
    await system.rpc("computer/start", { computerId: id }, tenant.token);
    await running(id);
    expect(provisions.find((p) => p.computerId === id)?.network).toEqual({ mode: "egress" });

    const history = await system.rpc("computer/activity", { computerId: id }, tenant.token);
    const lines = history.json.result.events
      .filter((e: { payload: { tool?: string } }) => e.payload.tool === "computer/setNetwork")
      .map((e: { payload: { ok: boolean; line: string } }) => [e.payload.ok, e.payload.line]);
    expect(lines).toEqual([
      [false, "network → egress"],
      [true, "network → egress"],
    ]);
  });

  it("a foreign computer's policy cannot be changed (NOT_FOUND, like a missing one)", async () => {
    const other = await system.newTenant("stranger");
    const { id } = (await system.rpc("computer/create", { spaceId: other.spaceId }, other.token)).json.result;
    const answer = await system.rpc(
      "computer/setNetwork",
      { computerId: id, network: { mode: "egress" } },
      tenant.token,
    );
    expect(answer.json.error?.code).toBe("NOT_FOUND");
  });

  it("a new space's Team Computer stores the deployment default (COMPUTER_NETWORK)", async () => {
    const ctx = { ...system.ctx, networkDefault: { mode: "egress" as const } };
    const caller = { userId: tenant.userId, tokenId: tenant.tokenId };
    const space = await createSpace(ctx, caller, { name: "networked" });
    const [team] = await listComputers(ctx, caller, { spaceId: space.id });
    expect(team?.network).toEqual({ mode: "egress" });
    // Without a default, as before: none.
    const plain = await createSpace(system.ctx, caller, { name: "plain" });
    expect((await listComputers(system.ctx, caller, { spaceId: plain.id }))[0]?.network).toEqual({
      mode: "none",
    });
  });

  it("a provider that cannot enforce a policy refuses it with UNSUPPORTED instead of ignoring it", () => {
    const base = {
      desktop: false,
      pageBrowser: false,
      terminal: false,
      billsWhileRunning: true,
      mountsHome: false,
      defaultPageBrowser: "fake" as const,
    };
    const provider = {
      kind: "fake" as const,
      capabilities: { ...base, networkModes: ["none", "egress"] as const },
    };
    expect(resolveCreatePolicy({ provider }, { mode: "egress" })).toEqual({ mode: "egress" });
    expect(() => resolveCreatePolicy({ provider }, { mode: "allowlist", allow: [] })).toThrow(
      expect.objectContaining({
        code: "UNSUPPORTED",
        details: { mode: "allowlist", supported: ["none", "egress"] },
      }),
    );
    // The deployment's default applies when the creator names none.
    expect(resolveCreatePolicy({ provider, networkDefault: { mode: "egress" } })).toEqual({ mode: "egress" });
    // A provider that declares nothing enforces only `none`.
    const silent = { kind: "fake" as const, capabilities: base };
    expect(resolveCreatePolicy({ provider: silent })).toEqual({ mode: "none" });
    expect(() => resolveCreatePolicy({ provider: silent }, { mode: "egress" })).toThrow(
      expect.objectContaining({ code: "UNSUPPORTED" }),
    );
  });
});
