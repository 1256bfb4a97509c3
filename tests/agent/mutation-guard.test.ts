// BRW-8: the mutation guard around a worker-hosted Pi session (the scripted Pi model standing in
// for inference, the fake computer's page browser loading a real loopback page). Under `ask` a
// browser_act waits in `waiting_approval` until a person approves, then runs once; a denial
// reaches the model as a tool error and the page got nothing; under `deny` no mutating tool runs
// while read-only tools still do. Every decision is one Activity line.
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Context,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { activityEvents, runs, spaceMembers } from "@rakazo/db";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let faux: ReturnType<typeof registerFauxProvider>;
let server: http.Server;
let pageUrl = "";
/** The comments the page received: what a browser_act click on "Post" sends. */
let posts = 0;

const PAGE = `<!doctype html><title>Guestbook</title><h1>Guestbook</h1>
<form method="post" action="/comment"><input name="text" value="hello"><button type="submit">Post</button></form>`;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.method === "POST" && req.url === "/comment") posts += 1;
    res.writeHead(200, { "content-type": "text/html" });
    res.end(req.method === "POST" ? "<!doctype html><title>Posted</title><p>Thanks</p>" : PAGE);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  faux = registerFauxProvider({ models: [{ id: "guarded-worker", input: ["text"] }] });
  system = await createTestSystem({ agentModel: "faux:guarded-worker" });
  await system.startWorker({
    agent: { model: "faux:guarded-worker", resolvedModel: faux.getModel(), apiKeys: {}, takeoverPollMs: 100 },
  });
});
afterAll(async () => {
  await system?.close();
  faux?.unregister();
  server?.close();
});

const call = (name: string, args: Record<string, unknown>) =>
  fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" });

function lastResult(context: Context) {
  const last = context.messages.at(-1);
  if (last?.role !== "toolResult") throw new Error("expected a tool result");
  return {
    isError: last.isError,
    text: last.content.map((c) => (c.type === "text" ? c.text : "")).join("\n"),
  };
}

/** The tool results the model read, in order (what each call answered it). */
const seen: { isError: boolean; text: string }[] = [];
const reading =
  (next: FauxResponseFactory): FauxResponseFactory =>
  (context, ...rest) => {
    seen.push(lastResult(context));
    return next(context, ...rest);
  };

/** Navigate, snapshot, click "Post" by its ref, then finish. */
function postAComment(): FauxResponseFactory[] {
  return [
    () => call("browser_navigate", { url: pageUrl }),
    reading(() => call("browser_snapshot", {})),
    reading((context) => {
      const ref = /\[([^\]]+)\] button "Post"/.exec(lastResult(context).text)?.[1];
      if (!ref) throw new Error(`no Post button in the snapshot:\n${lastResult(context).text}`);
      return call("browser_act", { actions: [{ type: "click", ref }] });
    }),
    reading(() => fauxAssistantMessage(fauxText("done"))),
  ];
}

const statusOf = async (runId: string) =>
  (await system.ctx.db.select().from(runs).where(eq(runs.id, runId)))[0]?.status;

async function untilStatus(runId: string, ...wanted: string[]) {
  return eventually(async () => {
    const status = await statusOf(runId);
    return status && wanted.includes(status) ? status : undefined;
  }, 30_000);
}

/** The run's Activity as (tool, line) pairs, oldest first. */
async function activityOf(runId: string) {
  const rows = await system.ctx.db
    .select()
    .from(activityEvents)
    .where(eq(activityEvents.runId, runId))
    .orderBy(asc(activityEvents.createdAt), asc(activityEvents.id));
  return rows.map((r) => [r.payload.tool, r.payload.line] as [string, string]);
}

/** A second person, a read-only member (viewer) of `spaceId`; answers their token. */
async function viewerOf(spaceId: string): Promise<string> {
  const viewer = await system.newTenant(`viewer-${spaceId.slice(-4)}`);
  await system.ctx.db.insert(spaceMembers).values({ spaceId, userId: viewer.userId, role: "viewer" });
  return viewer.token;
}

async function guardedTenant(label: string, policy: Record<string, unknown>) {
  const tenant = await system.newTenant(label);
  const computerId = await runningComputer(system, tenant);
  const set = await system.rpc("bot/policy/set", { botId: tenant.botId, policy }, tenant.token);
  expect(set.status, JSON.stringify(set.json)).toBe(200);
  return { ...tenant, computerId };
}

async function start(tenant: { computerId: string; botId: string; token: string }, task: string) {
  const started = await system.rpc(
    "agent/run",
    { computerId: tenant.computerId, botId: tenant.botId, task },
    tenant.token,
  );
  expect(started.status, JSON.stringify(started.json)).toBe(200);
  return started.json.result.id as string;
}

describe("the mutation guard in a worker-hosted run", () => {
  // Navigation to this page is allowed by its domain; everything else asks.
  const askPolicy = () => ({ mode: "ask", domains: [{ domain: "127.0.0.1", mode: "allow" }] });

  it("under ask, browser_act waits for a person's approval and then runs once", async () => {
    const tenant = await guardedTenant("approver", askPolicy());
    seen.length = 0;
    posts = 0;
    faux.setResponses(postAComment());
    const runId = await start(tenant, "Post a comment on the guestbook.");

    await untilStatus(runId, "waiting_approval");
    const listed = await system.rpc("approval/list", { computerId: tenant.computerId }, tenant.token);
    expect(listed.json.result).toHaveLength(1);
    const approval = listed.json.result[0];
    expect(approval).toMatchObject({ runId, tool: "browser_act", rule: "default", status: "pending" });
    expect(approval.description).toMatch(/^browser_act click \S+$/);
    const run = await system.rpc("run/get", { runId }, tenant.token);
    expect(run.json.result.status).toBe("waiting_approval");
    // Waiting, not run: the page got nothing yet.
    await new Promise((done) => setTimeout(done, 500));
    expect([await statusOf(runId), posts]).toEqual(["waiting_approval", 0]);

    // A viewer of the space may not decide (nor list: the API's role gate keeps viewers to reads
    // it names, apps/api/src/rpc/roles.ts).
    const viewer = await viewerOf(tenant.spaceId);
    const refused = await system.rpc(
      "approval/decide",
      { approvalId: approval.id, decision: "approve" },
      viewer,
    );
    expect([refused.status, refused.json.error?.code]).toEqual([403, "FORBIDDEN"]);
    expect([await statusOf(runId), posts]).toEqual(["waiting_approval", 0]);

    const decided = await system.rpc(
      "approval/decide",
      { approvalId: approval.id, decision: "approve" },
      tenant.token,
    );
    expect(decided.json.result).toMatchObject({ status: "approved", decidedBy: tenant.userId });
    expect(await untilStatus(runId, "completed", "failed")).toBe("completed");
    expect(posts).toBe(1);
    expect(seen.at(-1)).toMatchObject({ isError: false });
    expect(seen.at(-1)?.text).toContain("Completed 1 of 1 actions.");
    // A second decision on the same action is refused; nothing more is listed.
    const again = await system.rpc(
      "approval/decide",
      { approvalId: approval.id, decision: "deny" },
      tenant.token,
    );
    expect([again.status, again.json.error?.code]).toEqual([409, "CONFLICT"]);
    expect(
      (await system.rpc("approval/list", { computerId: tenant.computerId }, tenant.token)).json.result,
    ).toEqual([]);

    const activity = await activityOf(runId);
    expect(activity.filter(([tool]) => tool === "mutation_guard").map(([, line]) => line)).toEqual([
      `allowed by rule domain 127.0.0.1: browser_navigate ${pageUrl}`,
      `asked a person (rule default): ${approval.description}`,
      `approved by approver: ${approval.description}`,
    ]);
    expect(activity.filter(([tool]) => tool !== "mutation_guard").map(([tool]) => tool)).toEqual([
      "browser_navigate",
      "browser_act",
    ]);
  }, 60_000);

  it("a denial reaches the model as a tool error and nothing reaches the page", async () => {
    const tenant = await guardedTenant("denier", askPolicy());
    seen.length = 0;
    posts = 0;
    faux.setResponses(postAComment());
    const runId = await start(tenant, "Post a comment on the guestbook.");

    await untilStatus(runId, "waiting_approval");
    const [approval] = (await system.rpc("approval/list", { computerId: tenant.computerId }, tenant.token))
      .json.result;
    const decided = await system.rpc(
      "approval/decide",
      { approvalId: approval.id, decision: "deny" },
      tenant.token,
    );
    expect(decided.json.result).toMatchObject({ status: "denied", decidedBy: tenant.userId });
    expect(await untilStatus(runId, "completed", "failed")).toBe("completed");

    expect(posts).toBe(0);
    expect(seen.at(-1)?.isError).toBe(true);
    expect(seen.at(-1)?.text).toContain("A person denied this action (browser_act click");
    expect(seen.at(-1)?.text).toContain("Nothing was done.");
    const activity = await activityOf(runId);
    expect(activity.filter(([tool]) => tool === "mutation_guard").map(([, line]) => line)).toEqual([
      `allowed by rule domain 127.0.0.1: browser_navigate ${pageUrl}`,
      `asked a person (rule default): ${approval.description}`,
      `denied by denier: ${approval.description}`,
    ]);
    // The refused click never ran, so it has no command line of its own.
    expect(activity.filter(([tool]) => tool !== "mutation_guard").map(([tool]) => tool)).toEqual([
      "browser_navigate",
    ]);
  }, 60_000);

  it("under deny, no mutating tool runs and read-only tools still do", async () => {
    const tenant = await guardedTenant("teacher", { mode: "deny" });
    // A file a person left in the bot's folder, for the bot to read.
    const client = system.client(tenant.token);
    const bot = { computerId: tenant.computerId, botId: tenant.botId };
    await client.call("computer/takeControl", bot);
    await client.call("computer/files/write", { ...bot, path: "plan.txt", text: "the plan\n" });
    await client.call("computer/releaseControl", bot);
    seen.length = 0;
    posts = 0;
    faux.setResponses([
      () => call("shell", { argv: ["mkdir", "shell-ran"] }),
      reading(() => call("write_file", { path: "written.txt", content: "x" })),
      reading(() => call("browser_navigate", { url: pageUrl })),
      reading(() => call("list_files", {})),
      reading(() => call("read_file", { path: "plan.txt" })),
      reading(() => fauxAssistantMessage(fauxText("I only looked."))),
    ]);
    const runId = await start(tenant, "Look around, change nothing.");
    expect(await untilStatus(runId, "completed", "failed")).toBe("completed");

    const [shellResult, writeResult, navigateResult, listResult, readResult] = seen;
    for (const refused of [shellResult, writeResult, navigateResult]) {
      expect(refused?.isError).toBe(true);
      expect(refused?.text).toContain("This action was refused: denied by the bot's policy (rule default).");
    }
    expect(listResult).toMatchObject({ isError: false });
    expect(listResult?.text).toContain("plan.txt");
    expect(listResult?.text).not.toMatch(/shell-ran|written/);
    expect(readResult).toEqual({ isError: false, text: "the plan\n" });
    expect(posts).toBe(0);

    const activity = await activityOf(runId);
    expect(activity).toEqual([
      ["mutation_guard", "denied by the bot's policy (rule default): $ mkdir shell-ran"],
      ["mutation_guard", "denied by the bot's policy (rule default): write_file written.txt (1 bytes)"],
      ["mutation_guard", `denied by the bot's policy (rule default): browser_navigate ${pageUrl}`],
    ]);
  }, 60_000);

  it("the policy is read and replaced by a member; a bot without one is allowed everything", async () => {
    const tenant = await system.newTenant("policy-owner");
    const before = await system.rpc("bot/policy/get", { botId: tenant.botId }, tenant.token);
    expect(before.json.result).toEqual({
      botId: tenant.botId,
      policy: { mode: "allow" },
      stored: false,
      updatedAt: null,
    });
    const set = await system.rpc(
      "bot/policy/set",
      {
        botId: tenant.botId,
        policy: {
          mode: "ask",
          tools: { shell: "deny" },
          domains: [{ domain: "*.Example.test", mode: "allow" }],
        },
      },
      tenant.token,
    );
    expect(set.json.result).toMatchObject({
      stored: true,
      policy: { mode: "ask", tools: { shell: "deny" }, domains: [{ domain: "example.test", mode: "allow" }] },
    });
    const after = await system.rpc("bot/policy/get", { botId: tenant.botId }, tenant.token);
    expect(after.json.result.policy).toEqual(set.json.result.policy);
    const asViewer = await system.rpc(
      "bot/policy/set",
      { botId: tenant.botId, policy: { mode: "allow" } },
      await viewerOf(tenant.spaceId),
    );
    expect([asViewer.status, asViewer.json.error?.code]).toEqual([403, "FORBIDDEN"]);
    const bad = await system.rpc(
      "bot/policy/set",
      { botId: tenant.botId, policy: { mode: "sometimes" } },
      tenant.token,
    );
    expect([bad.status, bad.json.error?.code]).toEqual([400, "INVALID_INPUT"]);
  });
});
