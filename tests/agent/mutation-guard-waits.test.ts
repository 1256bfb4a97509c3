// BRW-8: how long an asked action waits. Nobody deciding within the approval timeout counts as a
// denial the model reads (one Activity line says so); a run whose worker stopped renewing its
// lease while it waited ends like a waiting takeover does (OPS-4), and its approval can no
// longer be decided or listed.
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import { activityEvents, executionLeases, runs } from "@rakazo/db";
import { endLapsedRuns, LAPSED_RUN_ERROR } from "@rakazo/services";
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let faux: ReturnType<typeof registerFauxProvider>;
const APPROVAL_TIMEOUT_MS = 1_500;

beforeAll(async () => {
  faux = registerFauxProvider({ models: [{ id: "waiting-worker", input: ["text"] }] });
  system = await createTestSystem({ agentModel: "faux:waiting-worker" });
  await system.startWorker({
    agent: {
      model: "faux:waiting-worker",
      resolvedModel: faux.getModel(),
      apiKeys: {},
      takeoverPollMs: 100,
      approvalTimeoutMs: APPROVAL_TIMEOUT_MS,
    },
  });
});
afterAll(async () => {
  await system?.close();
  faux?.unregister();
});

const statusOf = async (runId: string) =>
  (await system.ctx.db.select().from(runs).where(eq(runs.id, runId)))[0]?.status;
const untilStatus = (runId: string, ...wanted: string[]) =>
  eventually(async () => {
    const status = await statusOf(runId);
    return status && wanted.includes(status) ? status : undefined;
  }, 30_000);

async function askingRun(label: string, answers: { text: string; isError: boolean }[]) {
  const tenant = await system.newTenant(label);
  const computerId = await runningComputer(system, tenant);
  await system.client(tenant.token).call("bot/policy/set", { botId: tenant.botId, policy: { mode: "ask" } });
  faux.setResponses([
    fauxAssistantMessage(fauxToolCall("write_file", { path: "notes.txt", content: "hi" }), {
      stopReason: "toolUse",
    }),
    (context) => {
      const last = context.messages.at(-1);
      if (last?.role === "toolResult") {
        answers.push({
          isError: last.isError,
          text: last.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
        });
      }
      return fauxAssistantMessage(fauxText("stopping"));
    },
  ]);
  const run = await system
    .client(tenant.token)
    .call("agent/run", { computerId, botId: tenant.botId, task: "Write a note." });
  await untilStatus(run.id, "waiting_approval");
  return { ...tenant, computerId, runId: run.id };
}

const guardLines = async (runId: string) =>
  (
    await system.ctx.db
      .select()
      .from(activityEvents)
      .where(eq(activityEvents.runId, runId))
      .orderBy(asc(activityEvents.createdAt), asc(activityEvents.id))
  ).map((e) => [e.payload.tool, e.payload.line]);

describe("an asked action's wait", () => {
  it("counts as denied when nobody decides in time; the model reads it and nothing was written", async () => {
    const answers: { text: string; isError: boolean }[] = [];
    const { runId, computerId, token } = await askingRun("nobody-home", answers);
    expect(await untilStatus(runId, "completed", "failed")).toBe("completed");
    expect(answers).toEqual([
      {
        isError: true,
        text: expect.stringContaining("This action was not approved: no one decided within 1500 ms."),
      },
    ]);
    const files = await system.client(token).call("computer/files/list", { computerId, path: "" });
    expect(JSON.stringify(files)).not.toContain("notes.txt");
    expect(await guardLines(runId)).toEqual([
      ["mutation_guard", "asked a person (rule default): write_file notes.txt (2 bytes)"],
      ["mutation_guard", "denied, no one decided within 1500 ms: write_file notes.txt (2 bytes)"],
    ]);
  }, 60_000);

  it("ends with the run when its worker stops renewing the lease; the approval is gone", async () => {
    const answers: { text: string; isError: boolean }[] = [];
    const { runId, computerId, token } = await askingRun("lease-lapse", answers);
    const [approval] = await system.client(token).call("approval/list", { computerId });
    expect(approval?.runId).toBe(runId);
    // The worker's host is gone as far as the reconciler can tell: its lease lapsed.
    await system.ctx.db
      .update(executionLeases)
      .set({ expiresAt: sql`now() - interval '1 minute'` })
      .where(eq(executionLeases.holderId, runId));
    expect(await endLapsedRuns(system.ctx, { graceMs: 0 })).toEqual([runId]);
    const run = await system.client(token).call("run/get", { runId });
    expect(run).toMatchObject({ status: "failed", error: LAPSED_RUN_ERROR });

    expect(await system.client(token).call("approval/list", { computerId })).toEqual([]);
    const decided = await system.rpc(
      "approval/decide",
      { approvalId: approval?.id, decision: "approve" },
      token,
    );
    expect([decided.status, decided.json.error?.code]).toEqual([409, "CONFLICT"]);
    // Whichever saw it first: the waiting call (canceled it) or the decision (the run failed).
    expect(decided.json.error.message).toMatch(/already canceled|the run is failed/);
    // The waiting call stopped waiting without running (the model was told).
    await eventually(async () => (answers.length > 0 ? true : undefined), 15_000);
    expect(answers[0]).toMatchObject({ isError: true });
    expect(answers[0]?.text).toContain("the run stopped waiting");
  }, 60_000);
});
