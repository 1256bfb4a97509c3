// TOOL-4: every action a person takes through the API is recorded like the agent's tool calls
// (stored, streamed live, redacted the same way); read-only calls leave no event.
import { activityEvents } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
});
afterAll(() => system.close());

type StreamedEvent = { id: string; botId: string | null; payload: Record<string, any> };

async function readEvents(res: Response, count: number): Promise<StreamedEvent[]> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const events: StreamedEvent[] = [];
  let buffer = "";
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += new TextDecoder().decode(value);
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.includes("event: computer.command")) {
        events.push(JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null"));
      }
    }
  }
  await reader.cancel();
  return events;
}

describe("activity of API calls (TOOL-4)", () => {
  it("records exec, act, takeover, release and stopBot; streams them; redacts secrets; skips reads", async () => {
    const tenant = await system.newTenant("api-activity");
    const computerId = await runningComputer(system, tenant);
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz123456";
    const stream = await system.app.request(`/activity/stream?computerId=${computerId}`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    const live = readEvents(stream, 6);

    const call = async (name: string, body: Record<string, unknown>) => {
      const res = await system.rpc(name, { computerId, ...body }, tenant.token);
      expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
      return res.json.result;
    };
    await call("computer/exec", { argv: ["echo", `OPENAI_API_KEY=${secret}`], env: { API_TOKEN: secret } });
    // Read-only calls: no events.
    await call("computer/get", {});
    await call("computer/files/list", {});
    await call("computer/observe", { botId: tenant.botId });
    await call("computer/act", { botId: tenant.botId, actions: [{ type: "type", text: "hunter2" }] });
    await call("computer/takeControl", { botId: tenant.botId });
    await call("computer/releaseControl", { botId: tenant.botId });
    await call("computer/stopBot", { botId: tenant.botId });
    // A failed action is recorded too, as failed.
    const refused = await system.rpc(
      "computer/releaseControl",
      { computerId, botId: tenant.botId },
      tenant.token,
    );
    expect(refused.json.error.code).toBe("NOT_IN_CONTROL");

    const history = await call("computer/activity", {});
    const tools = history.events.map((e: StreamedEvent) => e.payload.tool);
    expect(tools).toEqual([
      "computer/exec",
      "computer/act",
      "computer/takeControl",
      "computer/releaseControl",
      "computer/stopBot",
      "computer/releaseControl",
    ]);
    const [exec, act] = history.events as StreamedEvent[];
    expect(exec?.botId).toBeNull();
    expect(exec?.payload).toMatchObject({
      ok: true,
      exitCode: 0,
      details: { via: "api", envNames: ["API_TOKEN"] },
    });
    expect(exec?.payload.command).toContain("OPENAI_API_KEY=[REDACTED]");
    expect(act).toMatchObject({
      botId: tenant.botId,
      payload: { ok: true, line: expect.stringContaining("type(7 chars)") },
    });
    expect(history.events.at(-1).payload).toMatchObject({
      ok: false,
      error: expect.stringContaining("control"),
    });
    // The secret (argv, output, env) and the typed text are nowhere in what was stored.
    const stored = await system.ctx.db
      .select()
      .from(activityEvents)
      .where(eq(activityEvents.computerId, computerId));
    expect(stored).toHaveLength(6);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(8));
    expect(JSON.stringify(stored)).not.toContain("hunter2");

    const streamed = await live;
    expect(streamed.map((e) => e.id)).toEqual(history.events.map((e: StreamedEvent) => e.id));
  });

  it("a call on someone else's computer records nothing there", async () => {
    const owner = await system.newTenant("api-activity-owner");
    const stranger = await system.newTenant("api-activity-stranger");
    const computerId = await runningComputer(system, owner);
    const res = await system.rpc("computer/exec", { computerId, argv: ["echo", "x"] }, stranger.token);
    expect(res.json.error.code).toBe("NOT_FOUND");
    const stored = await system.ctx.db
      .select()
      .from(activityEvents)
      .where(eq(activityEvents.computerId, computerId));
    expect(stored).toHaveLength(0);
  });
});
