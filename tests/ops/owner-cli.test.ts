// `./rakazo owner` and `./rakazo owner transfer <user>` : the server owner is the first
// user until the operator moves it; the members page shows the new one and the server-owner-only
// verb follows it (computer/releaseInterrupted answers NOT_SERVER_OWNER to the previous owner).
// Each CLI call starts a Node process that loads the services: seconds each on a busy machine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorCli } from "../support/operator-cli.ts";
import { createTestSystem, type TestSystem } from "../support/system.ts";

let system: TestSystem;

beforeAll(async () => {
  system = await createTestSystem();
});
afterAll(() => system?.close());

const cli = (args: string[]) => operatorCli(system, args);

describe("./rakazo owner", () => {
  it("shows the server owner and transfers it by name", async () => {
    const first = await system.newTenant("first");
    const next = await system.newTenant("next");
    const shown = await cli(["owner"]);
    expect([shown.code, shown.stdout]).toEqual([0, `first (${first.userId})\n`]);

    const moved = await cli(["owner", "transfer", "next"]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toBe(`server owner: next (${next.userId}), was first (${first.userId})\n`);
    const members = await system.client(first.token).call("member/list", { spaceId: first.spaceId });
    expect(members.serverOwner).toEqual({ userId: next.userId, name: "next" });
    const release = { id: `op_${"z".repeat(20)}`, workersStopped: true };
    expect((await system.rpc("computer/releaseInterrupted", release, first.token)).json.error?.code).toBe(
      "NOT_SERVER_OWNER",
    );
    expect((await system.rpc("computer/releaseInterrupted", release, next.token)).json.error?.code).toBe(
      "NOT_FOUND",
    );

    const nobody = await cli(["owner", "transfer", "nobody"]);
    expect([nobody.code, nobody.stderr]).toEqual([1, "rakazo: NOT_FOUND: no user nobody\n"]);
  }, 300_000);
});
