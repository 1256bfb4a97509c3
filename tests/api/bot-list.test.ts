// bot/list named by a computer ({ computerId }) answers the bots of that computer's space, so
// the computer view reads them beside computer/get instead of after it. The computer must be
// one of the caller's: another space's, a missing and a deleted one all answer the same
// NOT_FOUND; naming both a space and a computer, or neither, is bad input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let ada: Awaited<ReturnType<TestSystem["newTenant"]>>;
let eve: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  ada = await system.newTenant("ada");
  eve = await system.newTenant("eve");
}, 60_000);
afterAll(() => system?.close());

const call = (name: string, body: unknown, token: string) => system.rpc(name, body, token);
const ok = async (name: string, body: unknown, token: string) => {
  const res = await call(name, body, token);
  expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
};
const teamComputer = async (tenant: { spaceId: string; token: string }) =>
  ((await ok("computer/list", { spaceId: tenant.spaceId }, tenant.token)) as { id: string }[])[0]?.id ?? "";

describe("bot/list by computer", () => {
  it("answers the bots of the computer's space, as by the space", async () => {
    await ok("bot/create", { spaceId: ada.spaceId, name: "second" }, ada.token);
    const computerId = await teamComputer(ada);
    const bySpace = await ok("bot/list", { spaceId: ada.spaceId }, ada.token);
    const byComputer = await ok("bot/list", { computerId }, ada.token);
    expect(byComputer).toEqual(bySpace);
    expect(byComputer.map((b: { id: string; spaceId: string }) => [b.id === ada.botId, b.spaceId])).toEqual([
      [true, ada.spaceId],
      [false, ada.spaceId],
    ]);
    // The typed client takes the same input.
    expect(await system.client(ada.token).call("bot/list", { computerId })).toEqual(bySpace);
  });

  it("another space's, a missing and a deleted computer answer the same NOT_FOUND", async () => {
    const foreign = await teamComputer(eve);
    const made = await ok("computer/create", { spaceId: ada.spaceId, name: "gone" }, ada.token);
    await eventually(async () => {
      const c = await ok("computer/get", { computerId: made.id }, ada.token);
      return c.state === "running" || c.state === "failed" ? true : undefined;
    }, 30_000);
    await ok("computer/delete", { computerId: made.id }, ada.token);
    await eventually(async () => {
      const c = await call("computer/get", { computerId: made.id }, ada.token);
      return c.status === 404 || c.json.result?.state === "deleted" ? true : undefined;
    }, 30_000);
    const answers = [];
    for (const computerId of [foreign, `cmp_${"z".repeat(20)}`, made.id]) {
      const res = await call("bot/list", { computerId }, ada.token);
      answers.push([res.status, res.json.error?.code, res.json.result]);
    }
    expect(answers).toEqual([
      [404, "NOT_FOUND", undefined],
      [404, "NOT_FOUND", undefined],
      [404, "NOT_FOUND", undefined],
    ]);
  }, 90_000);

  it("a space and a computer at once, or neither, is bad input", async () => {
    const computerId = await teamComputer(ada);
    for (const body of [{ spaceId: ada.spaceId, computerId }, {}]) {
      const res = await call("bot/list", body, ada.token);
      expect([res.status, res.json.error?.code], JSON.stringify(body)).toEqual([400, "INVALID_INPUT"]);
    }
  });
});
