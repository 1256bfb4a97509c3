// ARCH-1: `agent/run` starts a run whose Pi session the worker hosts, with the
// computer tools bound to the run's fenced lease; a scripted model (no inference) drives it.
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { activityEvents, runs } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let faux: ReturnType<typeof registerFauxProvider>;

beforeAll(async () => {
  faux = registerFauxProvider({ models: [{ id: "scripted-worker", input: ["text"] }] });
  system = await createTestSystem({ agentModel: "faux:scripted-worker" });
  await system.startWorker({
    agent: { model: "faux:scripted-worker", resolvedModel: faux.getModel(), apiKeys: {} },
  });
});
afterAll(async () => {
  await system?.close();
  faux?.unregister();
});

/** Reads `count` computer.command events from a server-sent event stream, then closes it. */
async function readEvents(
  res: Response,
  count: number,
): Promise<{ id: string; payload: { tool: string } }[]> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const events: { id: string; payload: { tool: string } }[] = [];
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

describe("agent runs hosted by the worker", () => {
  it("runs the tools under the run's lease, records activity, and completes the run", async () => {
    const tenant = await system.newTenant("agent-owner");
    const computerId = await runningComputer(system, tenant);
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("shell", { argv: ["echo", "hello from the agent"] }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxToolCall("write_file", { path: "notes/agent.txt", content: "done" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("Wrote notes/agent.txt.")),
    ]);
    // Watch the live stream while the agent works (TOOL-4).
    const stream = await system.app.request(`/activity/stream?computerId=${computerId}`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const live = readEvents(stream, 2);
    const started = await system.rpc(
      "agent/run",
      { computerId, botId: tenant.botId, task: "Say hello, then write a note." },
      tenant.token,
    );
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const runId = started.json.result.id;

    const run = await eventually(async () => {
      const [row] = await system.ctx.db.select().from(runs).where(eq(runs.id, runId));
      return row?.status === "completed" || row?.status === "failed" ? row : undefined;
    }, 30_000);
    expect(run).toMatchObject({ status: "completed", error: null });

    const file = await system.rpc(
      "computer/files/read",
      // The bot's file tools start in its own folder on a Team Computer (CMP-1).
      { computerId, path: `bots/${tenant.botId}/notes/agent.txt` },
      tenant.token,
    );
    expect(file.json.result).toMatchObject({ text: "done", source: "live" });
    const events = await system.ctx.db.select().from(activityEvents).where(eq(activityEvents.runId, runId));
    expect(events.map((e) => e.payload.tool)).toEqual(["shell", "write_file"]);
    const streamed = await live;
    expect(streamed.map((e) => [e.id, e.payload.tool])).toEqual(events.map((e) => [e.id, e.payload.tool]));

    // The lease is released: a person may now take control of the bot.
    expect(
      (await system.rpc("computer/takeControl", { computerId, botId: tenant.botId }, tenant.token)).status,
    ).toBe(200);
  });

  it("is refused with a clear code when no model is configured", async () => {
    const bare = await createTestSystem();
    try {
      const tenant = await bare.newTenant("no-model");
      const res = await bare.rpc(
        "agent/run",
        { computerId: `cmp_${"a".repeat(20)}`, botId: tenant.botId, task: "x" },
        tenant.token,
      );
      expect(res.status).toBe(501);
      expect(res.json.error).toMatchObject({ code: "UNSUPPORTED" });
      expect(res.json.error.message).toContain("AGENT_MODEL");
    } finally {
      await bare.close();
    }
  });
});
