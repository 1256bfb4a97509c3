// The typed client (@rakazo/client) against the in-process API. The `expectTypeOf` lines are
// checked by `pnpm typecheck`: changing an RPC's output schema in @rakazo/api-contract makes
// this file stop compiling, which is the point.
import type { RpcInput, RpcOutput } from "@rakazo/api-contract";
import { createClient, RakazoApiError } from "@rakazo/client";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

type ComputerState =
  | "unprovisioned"
  | "provisioning"
  | "running"
  | "stopping"
  | "stopped"
  | "deleting"
  | "deleted"
  | "failed";
interface ExpectedComputer {
  id: string;
  spaceId: string;
  name: string;
  mode: "team" | "private";
  ownerBotId: string | null;
  providerKind: string;
  state: ComputerState;
  homeRevision: number;
  lastError: string | null;
  size: { memoryMib: number; cpus: number; pids: number; diskMib?: number | undefined } | null;
  network: {
    mode: "none" | "egress" | "allowlist";
    allow?: { host: string; ports?: number[] | undefined }[] | undefined;
  };
  createdAt: string;
  updatedAt: string;
}
interface ExpectedComputerDetails extends ExpectedComputer {
  canUpdate: boolean;
  capabilities: { terminal: boolean };
  tools: readonly ("gh" | "uv" | "pandoc" | "pdftotext" | "python3")[] | null;
  desktops?:
    | {
        live: number;
        limit: number;
        memoryUsedBytes: number | null;
        memoryMaxBytes: number | null;
        pids: number | null;
        pidsMax: number | null;
        desktopMemoryBytes: number | null;
      }
    | null
    | undefined;
  disk?: { usedBytes: number; sizeBytes: number } | undefined;
}

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  tenant = await system.newTenant("alice");
});
afterAll(() => system.close());

describe("the typed client", () => {
  it("names, inputs and results are the contract's types", () => {
    expectTypeOf<RpcInput<"computer/get">>().toEqualTypeOf<{ computerId: string }>();
    expectTypeOf<RpcOutput<"computer/get">>().toEqualTypeOf<ExpectedComputerDetails>();
    expectTypeOf<RpcOutput<"computer/list">>().toEqualTypeOf<ExpectedComputer[]>();
    // Dates travel as ISO strings, and the types say so.
    expectTypeOf<RpcOutput<"run/start">["lease"]["expiresAt"]>().toEqualTypeOf<string>();
    expectTypeOf<RpcOutput<"computer/exec">>().toEqualTypeOf<{
      exitCode: number;
      stdout: string;
      stderr: string;
      timedOut: boolean;
      truncated: boolean;
    }>();
  });

  it("returns the typed result of a call", async () => {
    const client = system.client(tenant.token);
    const computerId = await runningComputer(system, tenant);
    const computer = await client.call("computer/get", { computerId });
    expectTypeOf(computer).toEqualTypeOf<ExpectedComputerDetails>();
    expect(computer).toMatchObject({ id: computerId, spaceId: tenant.spaceId, state: "running" });

    const exec = await client.call("computer/exec", { computerId, argv: ["echo", "typed"] });
    expectTypeOf(exec.stdout).toEqualTypeOf<string>();
    expect(exec).toEqual({ exitCode: 0, stdout: "typed\n", stderr: "", timedOut: false, truncated: false });

    const { lease } = await client.call("run/start", { computerId, botId: tenant.botId });
    expect(Date.parse(lease.expiresAt)).toBeGreaterThan(Date.now());
  });

  it("throws RakazoApiError with code, status, message and details", async () => {
    const client = system.client(tenant.token);
    const missing = await client
      .call("computer/get", { computerId: `cmp_${"z".repeat(20)}` })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(RakazoApiError);
    expect(missing).toMatchObject({ code: "NOT_FOUND", status: 404, details: undefined });
    expect(missing.message).toBe(
      (await system.rpc("computer/get", { computerId: `cmp_${"z".repeat(20)}` }, tenant.token)).json.error
        .message,
    );

    const invalid = await client.call("computer/list", { spaceId: "nope" }).catch((e) => e);
    expect(invalid).toMatchObject({ code: "INVALID_INPUT", status: 400 });
    expect(invalid.details.issues[0].path).toBe("spaceId");

    const anonymous = await system
      .client()
      .call("space/list", {})
      .catch((e) => e);
    expect(anonymous).toMatchObject({ code: "UNAUTHENTICATED", status: 401 });
  });

  it("speaks plain HTTP: base URL, bearer header and JSON body", async () => {
    const seen: { url: string; auth: string | null; body: string }[] = [];
    const client = createClient({
      baseUrl: "http://localhost:8787/",
      token: tenant.token,
      fetch: async (request) => {
        seen.push({
          url: request.url,
          auth: request.headers.get("authorization"),
          body: await request.clone().text(),
        });
        return system.app.fetch(request);
      },
    });
    expect(await client.call("space/list", {})).toEqual([
      { id: tenant.spaceId, name: "alice's space", role: "owner" },
    ]);
    expect(seen).toEqual([
      { url: "http://localhost:8787/rpc/space/list", auth: `Bearer ${tenant.token}`, body: "{}" },
    ]);
  });
});
