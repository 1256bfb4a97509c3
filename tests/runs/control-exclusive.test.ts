// TKO-1 / CMP-3: while a person controls a bot's screen, tokenless
// computer/act and computer/observe are refused with HUMAN_IN_CONTROL; the controller's own
// calls carry their control token; a run granted the bot's execution lease ends the control.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let owner: Awaited<ReturnType<TestSystem["newTenant"]>>;
let memberToken: string;
let computerId: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  owner = await system.newTenant("ivy");
  computerId = await runningComputer(system, owner);
  const member = await system.newTenant("jon");
  await system.ctx.db.execute(
    sql`insert into space_members (space_id, user_id, role) values (${owner.spaceId}, ${member.userId}, 'member')`,
  );
  memberToken = member.token;
});
afterAll(() => system.close());

const newBot = async (name: string): Promise<string> =>
  (await system.rpc("bot/create", { spaceId: owner.spaceId, name }, owner.token)).json.result.id;
const take = async (botId: string) =>
  (await system.rpc("computer/takeControl", { computerId, botId }, owner.token)).json.result as {
    fencingToken: number;
  };
const act = (botId: string, extra: Record<string, unknown> = {}, token = owner.token) =>
  system.rpc("computer/act", { computerId, botId, actions: [{ type: "wait", ms: 1 }], ...extra }, token);
const observe = (botId: string, extra: Record<string, unknown> = {}, token = owner.token) =>
  system.rpc("computer/observe", { computerId, botId, ...extra }, token);

describe("control is exclusive", () => {
  it("refuses tokenless act and observe while a person holds control", async () => {
    const botId = await newBot("human-drives");
    expect((await act(botId)).status).toBe(200);
    await take(botId);
    const refused = await act(botId);
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("HUMAN_IN_CONTROL");
    expect((await observe(botId)).json.error.code).toBe("HUMAN_IN_CONTROL");
    // Another member of the space is refused too, with or without a token.
    expect((await act(botId, {}, memberToken)).json.error.code).toBe("HUMAN_IN_CONTROL");
  });

  it("the controller's own calls carry their control token", async () => {
    const botId = await newBot("own-token");
    const lease = await take(botId);
    expect((await act(botId, { controlToken: lease.fencingToken })).json.result).toEqual({
      completed: 1,
      total: 1,
    });
    expect((await observe(botId, { controlToken: lease.fencingToken })).status).toBe(200);
    // Someone else cannot borrow it, and a stale one is refused.
    expect((await act(botId, { controlToken: lease.fencingToken }, memberToken)).json.error.code).toBe(
      "NOT_IN_CONTROL",
    );
    expect((await act(botId, { controlToken: lease.fencingToken + 1 })).json.error.code).toBe(
      "NOT_IN_CONTROL",
    );
  });

  it("after release, tokenless calls work again", async () => {
    const botId = await newBot("released");
    await take(botId);
    await system.rpc("computer/releaseControl", { computerId, botId }, owner.token);
    expect((await act(botId)).status).toBe(200);
  });

  it("a run granted the bot's execution lease ends the person's control", async () => {
    const botId = await newBot("run-takes-over");
    const control = await take(botId);
    const started = await system.rpc("run/start", { computerId, botId }, owner.token);
    expect(started.status).toBe(200);
    const lease = started.json.result.lease as { fencingToken: number };
    // The run drives; the person's control is gone (nothing left to release, token dead).
    expect((await act(botId, { fencingToken: lease.fencingToken })).status).toBe(200);
    const release = await system.rpc("computer/releaseControl", { computerId, botId }, owner.token);
    expect(release.json.error.code).toBe("NOT_IN_CONTROL");
    expect((await act(botId, { controlToken: control.fencingToken })).json.error.code).toBe("LEASE_HELD");
  });
});
