// Per-computer sizing: deployment defaults, an override at create within the
// deployment's maximum, stored on the computer and handed to the provider at provision.
import { createFakeProvider, type ProvisionRequest } from "@rakazo/sandbox";
import { DEFAULT_SIZING } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
const provisions: ProvisionRequest[] = [];
/** What the provider's `homeDisks.usage` answers, per home key (a Docker provider measures it). */
const diskUsage = new Map<string, { usedBytes: number; sizeBytes: number }>();

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
        homeDisks: {
          usage: async (homeKey) => diskUsage.get(homeKey) ?? null,
          detach: async () => {},
          remove: async () => {},
        },
      };
    },
  });
  tenant = await system.newTenant("sizer");
  await system.startWorker();
});
afterAll(() => system.close());

describe("computer sizing", () => {
  it("gives a new computer the deployment's default size", async () => {
    const created = await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token);
    expect(created.json.result.size).toEqual(DEFAULT_SIZING.defaults);
  });

  it("stores an override and provisions the machine with it", async () => {
    const created = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, size: { memoryMib: 1024, cpus: 1.5, pids: 512, diskMib: 2048 } },
      tenant.token,
    );
    const { id } = created.json.result;
    expect(created.json.result.size).toEqual({ memoryMib: 1024, cpus: 1.5, pids: 512, diskMib: 2048 });
    const request = await eventually(async () => provisions.find((p) => p.computerId === id));
    expect(request.sizing).toEqual({
      memoryBytes: 1024 * 1024 ** 2,
      nanoCpus: 1_500_000_000,
      pidsLimit: 512,
      diskBytes: 2048 * 1024 ** 2,
    });
    const got = await system.rpc("computer/get", { computerId: id }, tenant.token);
    expect(got.json.result.size).toEqual({ memoryMib: 1024, cpus: 1.5, pids: 512, diskMib: 2048 });
  });

  it("computer/get reports the home's disk where the provider keeps one, and nothing where it has none", async () => {
    const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json
      .result;
    const bare = await system.rpc("computer/get", { computerId: id }, tenant.token);
    expect(bare.json.result).not.toHaveProperty("disk");
    const homeKey = id.replace(/^cmp_/, "home_");
    diskUsage.set(homeKey, { usedBytes: 5 * 1024 ** 2, sizeBytes: 10_240 * 1024 ** 2 });
    // The disk is kept for LIVE_REPORT_TTL_MS (1 s) per computer: it shows within that bound.
    const startedAt = Date.now();
    const disk = await eventually(async () => {
      const got = await system.rpc("computer/get", { computerId: id }, tenant.token);
      return got.json.result.disk;
    });
    expect(disk).toEqual({ usedBytes: 5 * 1024 ** 2, sizeBytes: 10_240 * 1024 ** 2 });
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });

  it("computer/get of a running computer reports its live desktops", async () => {
    const { id } = (await system.rpc("computer/create", { spaceId: tenant.spaceId }, tenant.token)).json
      .result;
    const running = await eventually(async () => {
      const got = await system.rpc("computer/get", { computerId: id }, tenant.token);
      return got.json.result.state === "running" ? got.json.result : undefined;
    });
    expect(running.desktops).toMatchObject({ live: 0 });
    const observed = await system.rpc(
      "computer/observe",
      { computerId: id, botId: tenant.botId },
      tenant.token,
    );
    expect(observed.status, JSON.stringify(observed.json)).toBe(200);
    const got = await system.rpc("computer/get", { computerId: id }, tenant.token);
    expect(got.json.result.desktops).toMatchObject({ live: 1, limit: 0, memoryMaxBytes: null });
  });

  it("refuses a size above the deployment's maximum with INVALID_INPUT and records nothing", async () => {
    const before = (await system.rpc("computer/list", { spaceId: tenant.spaceId }, tenant.token)).json.result
      .length;
    const refused = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, size: { memoryMib: DEFAULT_SIZING.max.memoryMib + 1 } },
      tenant.token,
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: "INVALID_INPUT", details: { field: "size.memoryMib" } });
    const cpus = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, size: { cpus: DEFAULT_SIZING.max.cpus + 0.5 } },
      tenant.token,
    );
    expect(cpus.json.error).toMatchObject({ code: "INVALID_INPUT", details: { field: "size.cpus" } });
    const disk = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, size: { diskMib: DEFAULT_SIZING.max.diskMib + 1 } },
      tenant.token,
    );
    expect(disk.json.error).toMatchObject({
      code: "INVALID_INPUT",
      details: { field: "size.diskMib", max: DEFAULT_SIZING.max.diskMib },
    });
    const tiny = await system.rpc(
      "computer/create",
      { spaceId: tenant.spaceId, size: { diskMib: 1 } },
      tenant.token,
    );
    expect(tiny.json.error).toMatchObject({ code: "INVALID_INPUT" });
    const after = (await system.rpc("computer/list", { spaceId: tenant.spaceId }, tenant.token)).json.result
      .length;
    expect(after).toBe(before);
  });
});
