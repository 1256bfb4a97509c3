// Computer names in a space: a computer created without a name gets one no other computer of
// the space has ("Team Computer" first, then "Computer N"), also when two such creates race;
// an explicit name is kept as given, a duplicate included (docs/decisions.md "The computer view,
// finished").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;

beforeAll(async () => {
  system = await createTestSystem({});
  tenant = await system.newTenant("namer");
});
afterAll(() => system.close());

const create = async (input: Record<string, unknown> = {}, who = tenant) => {
  const created = await system.rpc("computer/create", { spaceId: who.spaceId, ...input }, who.token);
  expect(created.json.error).toBeUndefined();
  return created.json.result as { id: string; name: string };
};
const names = async (who = tenant) => {
  const listed = await system.rpc("computer/list", { spaceId: who.spaceId }, who.token);
  return (listed.json.result as { name: string }[]).map((c) => c.name).sort();
};

describe("computer names in a space", () => {
  it("a space's second computer without a name is not a second Team Computer", async () => {
    expect(await names()).toEqual(["Team Computer"]);
    expect((await create()).name).toBe("Computer 2");
    expect((await create({ mode: "private", botId: tenant.botId })).name).toBe("Private Computer");
    expect((await create({ mode: "private", botId: tenant.botId })).name).toBe("Computer 4");
  });

  it("skips a number an explicit name took, and keeps an explicit duplicate as given", async () => {
    expect((await create({ name: "Computer 5" })).name).toBe("Computer 5");
    expect((await create()).name).toBe("Computer 6");
    expect((await create({ name: "Team Computer" })).name).toBe("Team Computer");
    expect((await names()).filter((n) => n === "Team Computer")).toHaveLength(2);
  });

  it("creates at once get names of their own", async () => {
    // A space of its own: five computers starting at once stay within the default quotas.
    const racer = await system.newTenant("racer");
    const made = await Promise.all(Array.from({ length: 5 }, () => create({}, racer)));
    for (const computer of made) expect(computer.name).toMatch(/^Computer \d+$/);
    expect(new Set(made.map((c) => c.name)).size).toBe(made.length);
    expect((await names(racer)).length).toBe(6);
  });
});
