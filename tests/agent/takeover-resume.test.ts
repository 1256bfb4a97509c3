// TKO-3: a worker-hosted agent run that calls request_takeover waits for a
// person (waiting_takeover, not completed); the person takes control without stopping the bot,
// and on hand-back the same Pi session continues (it still sees its earlier turns) and completes.
import {
  type Context,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { runs } from "@rakazo/db";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let faux: ReturnType<typeof registerFauxProvider>;

beforeAll(async () => {
  faux = registerFauxProvider({ models: [{ id: "takeover-worker", input: ["text"] }] });
  system = await createTestSystem({ agentModel: "faux:takeover-worker" });
  await system.startWorker({
    agent: {
      model: "faux:takeover-worker",
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

const statusOf = async (runId: string) =>
  (await system.ctx.db.select().from(runs).where(eq(runs.id, runId)))[0]?.status;

describe("request_takeover from a worker-hosted run", () => {
  it("waits for the person and resumes the same session when they hand back", async () => {
    const tenant = await system.newTenant("takeover");
    const computerId = await runningComputer(system, tenant);
    let resumedContext: Context | undefined;
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("request_takeover", { reason: "log in to the bank" }), {
        stopReason: "toolUse",
      }),
      (context) => {
        resumedContext = context;
        return fauxAssistantMessage(fauxText("Logged in by the person; finished."));
      },
    ]);
    const started = await system.rpc(
      "agent/run",
      { computerId, botId: tenant.botId, task: "Check the bank balance." },
      tenant.token,
    );
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const runId = started.json.result.id as string;

    await eventually(async () => ((await statusOf(runId)) === "waiting_takeover" ? true : undefined), 30_000);
    // Still waiting a moment later: the request did not end the run.
    await new Promise((done) => setTimeout(done, 1_000));
    expect(await statusOf(runId)).toBe("waiting_takeover");
    const run = await system.rpc("run/get", { runId }, tenant.token);
    expect(run.json.result).toMatchObject({
      status: "waiting_takeover",
      takeoverReason: "log in to the bank",
    });

    // The person takes control without stopping the bot (TKO-2 allows it for a waiting run).
    const taken = await system.rpc("computer/takeControl", { computerId, botId: tenant.botId }, tenant.token);
    expect(taken.status, JSON.stringify(taken.json)).toBe(200);
    const released = await system.rpc(
      "computer/releaseControl",
      { computerId, botId: tenant.botId },
      tenant.token,
    );
    expect(released.json.result).toMatchObject({ released: true, resumedRunId: runId });

    await eventually(async () => ((await statusOf(runId)) === "completed" ? true : undefined), 30_000);
    // The same session: the resumed turn sees the task, its own request and the hand-back note.
    const seen = JSON.stringify(resumedContext?.messages ?? []);
    expect(seen).toContain("Check the bank balance.");
    expect(seen).toContain("request_takeover");
    expect(seen).toContain("handed control of your screen back");
  }, 90_000);
});
