// Who acted, in Activity: a call through the API is recorded with `details.by` — "person" when
// it came with a web session's token (a person in the web app), "api" with an API token (a
// script or the CLI) — beside `via: "api"`, which tells both from a bot's own tool calls.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
let computerId = "";

beforeAll(async () => {
  system = await createTestSystem({});
  tenant = await system.newTenant("actor");
  await system.startWorker();
  const listed = await system.rpc("computer/list", { spaceId: tenant.spaceId }, tenant.token);
  computerId = listed.json.result[0].id;
  await system.rpc("computer/start", { computerId }, tenant.token);
  await eventually(async () => {
    const got = await system.rpc("computer/get", { computerId }, tenant.token);
    return got.json.result?.state === "running" ? true : undefined;
  });
});
afterAll(() => system.close());

const detailsOf = async (marker: string) => {
  const activity = await system.rpc("computer/activity", { computerId, limit: 500 }, tenant.token);
  const event = (activity.json.result.events as { payload: { command?: string; details: unknown } }[]).find(
    (e) => e.payload.command?.includes(marker),
  );
  return event?.payload.details as Record<string, unknown> | undefined;
};

describe("Activity says who acted", () => {
  it("an API token's call is by the API, a web session's by a person", async () => {
    await system.rpc("computer/exec", { computerId, argv: ["echo", "by-script"] }, tenant.token);
    expect(await detailsOf("by-script")).toMatchObject({ via: "api", by: "api", userId: tenant.userId });

    const session = await system.rpc(
      "token/create",
      { name: "a browser", kind: "web_session" },
      tenant.token,
    );
    expect(session.status).toBe(200);
    await system.rpc("computer/exec", { computerId, argv: ["echo", "by-person"] }, session.json.result.token);
    expect(await detailsOf("by-person")).toMatchObject({ via: "api", by: "person", userId: tenant.userId });
  });
});
