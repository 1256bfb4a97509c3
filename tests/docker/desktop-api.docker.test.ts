// A desktop through the whole API: a Docker computer, `computer/observe` returns a PNG of the
// bot's Chromium, `computer/act` types into a page and the next observe shows it.
import { createProvider } from "@rakazo/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("desktops through the API on Docker");

describe.skipIf(gate.skip)(gate.title, () => {
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;

  beforeAll(async () => {
    system = await createTestSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
    });
    await system.startWorker();
    tenant = await system.newTenant("docker-user");
    computerId = await runningComputer(system, tenant);
  }, 120_000);

  afterAll(async () => {
    if (!system) return;
    // Deleting destroys the container; wait for it so no container is left behind.
    await system.rpc("computer/delete", { computerId }, tenant.token);
    const row = await system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const current = await system.ctx.db.query.computers.findFirst({
        where: (c, { eq }) => eq(c.id, computerId),
      });
      if (current?.state === "deleted") break;
      await new Promise((done) => setTimeout(done, 250));
    }
    if (row?.providerRef) await system.provider.destroy(row.providerRef);
    await system.close();
  }, 120_000);

  const observe = async () => {
    const res = await system.rpc("computer/observe", { computerId, botId: tenant.botId }, tenant.token);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.result as { pngBase64: string; width: number; height: number; frameHash: string };
  };
  const act = async (actions: unknown[]) => {
    const res = await system.rpc("computer/act", { computerId, botId: tenant.botId, actions }, tenant.token);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.result;
  };

  it("observe returns a PNG of the bot's Chromium desktop", async () => {
    const frame = await observe();
    const png = Buffer.from(frame.pngBase64, "base64");
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect([frame.width, frame.height]).toEqual([1280, 800]);
    const ps = await system.rpc(
      "computer/exec",
      { computerId, argv: ["pgrep", "-c", "chromium"] },
      tenant.token,
    );
    expect(Number(ps.json.result.stdout.trim())).toBeGreaterThan(0);
  });

  it("act types into a page and the next observe shows the text", async () => {
    const page = "data:text/html,<title>t</title><input id=i autofocus style='font-size:40px;width:900px'>";
    expect(
      await act([
        { type: "key", keys: "ctrl+l" },
        { type: "type", text: page },
        { type: "key", keys: "Return" },
        { type: "wait", ms: 1500 },
      ]),
    ).toMatchObject({ completed: 4, total: 4 });
    await act([
      { type: "click", x: 400, y: 40 },
      { type: "wait", ms: 300 },
    ]);
    const before = await observe();
    expect(
      await act([
        { type: "type", text: "hello rakazo" },
        { type: "wait", ms: 300 },
      ]),
    ).toEqual({ completed: 2, total: 2 });
    const after = await observe();
    expect(after.frameHash).not.toBe(before.frameHash);
    // Unchanged screen → identical frame (TOOL-2 relies on it).
    expect((await observe()).frameHash).toBe(after.frameHash);
  });
});
