// A screen minted after the computer's machine restarted or was replaced still opens, on real
// Docker containers: computer/screenUrl configures a gateway once per machine
// (packages/services/src/screens/gateway-keys.ts), so a restart (same container) needs no
// configure at the mint, a replacement (a new container, after `docker rm -f`) is configured at
// its first mint, and in each case the view capability, authorized as the web service has it
// authorized, gets RFB frame updates from the computer's gateway.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { openRfb } from "@rakazo/bench/rfb-client";
import { viaWebSocketRaw } from "@rakazo/bench/rfb-stream";
import { computers } from "@rakazo/db";
import { TICKET_HEADER } from "@rakazo/protocol";
import { createProvider, type SandboxProvider } from "@rakazo/sandbox";
import { authorizeScreen } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countingConfigures } from "../support/counting-configures.ts";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

const gate = await requireDocker("screens after a machine restart or replacement");

/** Every `screens.configure` made into a machine, by its ref. */
const configures: string[] = [];

function counting(provider: SandboxProvider): SandboxProvider {
  return countingConfigures(provider, configures);
}

describe.skipIf(gate.skip)(gate.title, () => {
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;

  beforeAll(async () => {
    system = await createTestSystem({
      screens: true,
      provider: async (dataDir) =>
        counting(await createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir })),
    });
    await system.startWorker();
    tenant = await system.newTenant("scr");
    computerId = await runningComputer(system, tenant);
  }, 180_000);
  afterAll(async () => {
    // Deleted through the API and waited for, so no replacement is left behind the worker.
    if (computerId) {
      await system.rpc("computer/delete", { computerId }, tenant.token);
      await eventually(async () => ((await machine()).state === "deleted" ? true : undefined), 90_000).catch(
        (error: unknown) => console.error(`computer ${computerId} not deleted`, error),
      );
    }
    await system?.close();
  }, 120_000);

  const machine = async () => {
    const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
    if (!row) throw new Error(`computer ${computerId} is gone`);
    return row;
  };
  const running = (other?: string | null) =>
    eventually(async () => {
      const row = await machine();
      if (row.state === "failed") throw new Error(`computer failed: ${row.lastError}`);
      return row.state === "running" && row.providerRef !== other ? row : undefined;
    }, 150_000);

  /** Mints a view URL, authorizes it like the proxy, and waits for a frame update at the gateway. */
  const watch = async () => {
    const res = await system.rpc(
      "computer/screenUrl",
      { computerId, botId: tenant.botId, policy: "view" },
      tenant.token,
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const configuredAtMint = configures.length;
    const capability = new URL(res.json.result.url).pathname.split("/")[2] as string;
    const { target, ticket } = await authorizeScreen(system.ctx, { capability });
    if (target.transport !== "unix") throw new Error(`a Docker gateway on ${target.transport}`);
    const stream = await viaWebSocketRaw({
      socketPath: target.socketPath,
      path: "/v1/rfb",
      headers: { [TICKET_HEADER]: ticket },
    });
    const session = await openRfb(stream);
    let updates = 0;
    session.onUpdate(() => {
      updates += 1;
    });
    session.request(false);
    await eventually(async () => (updates > 0 ? true : undefined), 30_000);
    session.close();
    return { configuredAtMint };
  };

  it("restarted (the same container): the mint makes no configure call and the screen opens", async () => {
    await watch();
    const before = await machine();
    const stop = await system.rpc("computer/stop", { computerId }, tenant.token);
    expect(stop.status, JSON.stringify(stop.json)).toBe(200);
    await eventually(async () => ((await machine()).state === "stopped" ? true : undefined), 90_000);
    const start = await system.rpc("computer/start", { computerId }, tenant.token);
    expect(start.status, JSON.stringify(start.json)).toBe(200);
    const after = await running();
    expect(after.providerRef).toBe(before.providerRef);
    const configured = configures.length;
    const { configuredAtMint } = await watch();
    expect(configuredAtMint).toBe(configured);
  }, 240_000);

  it("replaced (docker rm -f, a new container): its first mint configures it and the screen opens", async () => {
    const before = await machine();
    await promisify(execFile)("docker", ["rm", "-f", before.providerRef as string]);
    const use = await system.rpc("computer/exec", { computerId, argv: ["true"] }, tenant.token);
    expect(use.json.error?.code, JSON.stringify(use.json)).toBe("COMPUTER_GONE");
    const after = await running(before.providerRef);
    const configured = configures.filter((ref) => ref === after.providerRef).length;
    await watch();
    expect(configures.filter((ref) => ref === after.providerRef).length).toBe(configured + 1);
  }, 240_000);
});
