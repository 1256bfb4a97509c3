// A worker-hosted run's transcript (the computer view's live log): every event is stored in
// order, streamed live on /activity/stream as `run.event`, redacted like Activity, carries a small
// thumbnail for an observation, and is read back whole by `run/transcript` later; `run/list`
// counts the run's tool calls; `run/waiting` shows a takeover's reason; another tenant sees none
// of it; `agent/status` says what to set when no model is configured.
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let faux: ReturnType<typeof registerFauxProvider>;

beforeAll(async () => {
  faux = registerFauxProvider({ models: [{ id: "transcript-worker", input: ["text", "image"] }] });
  system = await createTestSystem({ agentModel: "faux:transcript-worker" });
  await system.startWorker({
    agent: {
      model: "faux:transcript-worker",
      resolvedModel: faux.getModel(),
      apiKeys: {},
      takeoverPollMs: 200,
    },
  });
});
afterAll(async () => {
  await system?.close();
  faux?.unregister();
});

interface StreamedEvent {
  seq: number;
  runId: string;
  type: string;
  payload: Record<string, unknown>;
  thumbnail: string | null;
}

/** Reads `run.event` events from the stream until `done` says so, then closes it. */
async function readRunEvents(res: Response, done: (events: StreamedEvent[]) => boolean) {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const events: StreamedEvent[] = [];
  let buffer = "";
  while (!done(events)) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    buffer += new TextDecoder().decode(value);
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.includes("event: run.event"))
        events.push(JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null"));
    }
  }
  await reader.cancel();
  return events;
}

const FAKE_SECRET = `rkz_${"q7".repeat(20)}`;

describe("run transcripts", () => {
  it("stores, streams and reads back a run's transcript, redacted, with thumbnails", async () => {
    const tenant = await system.newTenant("transcript-owner");
    const other = await system.newTenant("transcript-stranger");
    const computerId = await runningComputer(system, tenant);
    faux.setResponses([
      fauxAssistantMessage([fauxText("Looking at the screen first."), fauxToolCall("computer_observe", {})], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(
        fauxToolCall("write_file", { path: "notes/key.txt", content: `the key is ${FAKE_SECRET}` }),
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage(fauxToolCall("read_file", { path: "notes/missing.txt" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("Done: wrote notes/key.txt.")),
    ]);
    const stream = await system.app.request(`/activity/stream?computerId=${computerId}`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    const live = readRunEvents(stream, (events) =>
      events.some((e) => e.type === "status" && e.payload.status === "completed"),
    );
    const started = await system.rpc(
      "agent/run",
      { computerId, botId: tenant.botId, task: "Look, then write the key down." },
      tenant.token,
    );
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const runId = started.json.result.id as string;
    const streamed = await live;

    const read = await system.rpc("run/transcript", { runId }, tenant.token);
    expect(read.status, JSON.stringify(read.json)).toBe(200);
    const events = read.json.result.events as StreamedEvent[];
    expect(read.json.result.more).toBe(false);
    // Live and stored agree, in order, numbered 1, 2, …
    expect(streamed.map((e) => [e.seq, e.type])).toEqual(events.map((e) => [e.seq, e.type]));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => (e.type === "tool" ? `tool:${e.payload.tool}` : e.type))).toEqual([
      "status",
      "text",
      "tool:computer_observe",
      "tool:write_file",
      "tool:read_file",
      "text",
      "status",
    ]);
    const [first, said, observed, wrote, failed] = events;
    expect(first?.payload).toMatchObject({ status: "running", task: "Look, then write the key down." });
    expect(said?.payload.text).toBe("Looking at the screen first.");
    // An observation keeps a small PNG of its frame.
    expect(observed?.thumbnail).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from((observed?.thumbnail ?? "").split(",")[1] ?? "", "base64");
    expect(png.readUInt32BE(16)).toBeLessThanOrEqual(320);
    expect(png.length).toBeLessThanOrEqual(64 * 1024);
    expect(wrote?.thumbnail).toBeNull();
    // Arguments are redacted as Activity redacts them; the tool's result and duration are kept.
    expect(JSON.stringify(events)).not.toContain(FAKE_SECRET);
    expect(wrote?.payload).toMatchObject({ tool: "write_file", ok: true, args: { path: "notes/key.txt" } });
    expect(typeof wrote?.payload.durationMs).toBe("number");
    expect(failed?.payload).toMatchObject({ tool: "read_file", ok: false });
    expect(String(failed?.payload.result)).not.toBe("");
    expect(events.at(-1)?.payload).toMatchObject({ status: "completed" });

    // A later page starts after the seq it is given.
    const rest = await system.rpc("run/transcript", { runId, afterSeq: 5 }, tenant.token);
    expect(rest.json.result.events.map((e: StreamedEvent) => e.seq)).toEqual([6, 7]);

    const history = await system.rpc("run/list", { computerId, botId: tenant.botId }, tenant.token);
    expect(history.json.result[0]).toMatchObject({
      id: runId,
      status: "completed",
      toolCalls: 3,
      task: "Look, then write the key down.",
    });
    expect(history.json.result[0].finishedAt).not.toBeNull();

    // Another tenant: the run, the history and the stream answer like missing ones.
    const foreign = await system.rpc("run/transcript", { runId }, other.token);
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe("NOT_FOUND");
    const foreignList = await system.rpc("run/list", { computerId, botId: tenant.botId }, other.token);
    expect(foreignList.json.error.code).toBe("NOT_FOUND");
    const foreignStream = await system.app.request(`/activity/stream?computerId=${computerId}`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect(foreignStream.status).toBe(404);
  }, 90_000);

  it("shows a takeover's reason in the space's waiting runs, and the resumed run's transcript", async () => {
    const tenant = await system.newTenant("transcript-takeover");
    const other = await system.newTenant("transcript-takeover-stranger");
    const computerId = await runningComputer(system, tenant);
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("request_takeover", { reason: "solve the captcha" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxText("Thanks, finished.")),
    ]);
    const started = await system.rpc(
      "agent/run",
      { computerId, botId: tenant.botId, task: "Sign up." },
      tenant.token,
    );
    const runId = started.json.result.id as string;
    const waiting = await eventually(async () => {
      const res = await system.rpc("run/waiting", { spaceId: tenant.spaceId }, tenant.token);
      return res.json.result.length > 0 ? res.json.result : undefined;
    }, 30_000);
    expect(waiting).toEqual([
      expect.objectContaining({ runId, computerId, botId: tenant.botId, reason: "solve the captcha" }),
    ]);
    expect((await system.rpc("run/waiting", { spaceId: other.spaceId }, other.token)).json.result).toEqual(
      [],
    );
    expect((await system.rpc("run/waiting", { spaceId: tenant.spaceId }, other.token)).status).toBe(404);

    await system.rpc("computer/takeControl", { computerId, botId: tenant.botId }, tenant.token);
    await system.rpc("computer/releaseControl", { computerId, botId: tenant.botId }, tenant.token);
    const events = await eventually(async () => {
      const res = await system.rpc("run/transcript", { runId }, tenant.token);
      const list = res.json.result.events as StreamedEvent[];
      return list.some((e) => e.payload.status === "completed") ? list : undefined;
    }, 30_000);
    expect(events.filter((e) => e.type === "status").map((e) => e.payload.status)).toEqual([
      "running",
      "waiting_takeover",
      "resumed",
      "completed",
    ]);
    expect(events.find((e) => e.payload.tool === "request_takeover")?.payload.args).toEqual({
      reason: "solve the captcha",
    });
    expect((await system.rpc("run/waiting", { spaceId: tenant.spaceId }, tenant.token)).json.result).toEqual(
      [],
    );
  }, 90_000);

  it("agent/status says which variables to set when no model is configured", async () => {
    const tenant = await system.newTenant("status-owner");
    const configured = await system.rpc("agent/status", {}, tenant.token);
    expect(configured.json.result).toEqual({
      configured: true,
      model: "faux:transcript-worker",
      problem: null,
    });
    const bare = await createTestSystem();
    try {
      const someone = await bare.newTenant("status-bare");
      const res = await bare.rpc("agent/status", {}, someone.token);
      expect(res.json.result).toMatchObject({ configured: false, model: null });
      expect(res.json.result.problem).toContain("AGENT_MODEL");
      expect(res.json.result.problem).toContain("OPENROUTER_API_KEY");
    } finally {
      await bare.close();
    }
  });
});
