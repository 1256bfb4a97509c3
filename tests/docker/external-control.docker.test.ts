// The control plane (EXT-1, EXT-2, EXT-4): the real bridge (a child process) in front
// of the real API (HTTP on loopback) on real Docker computers. create → adopt again → exec →
// file write/read → observe → browser → destroy → destroy again; a restarted bridge re-adopts
// from the scope alone; another scope's computer without its capability is not found; a
// destroyed computer's capability is refused; each token is refused where another is expected;
// nothing is left behind.
import { createExternalClient } from "@rakazo/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExternalStack, pageServerCommand, startExternalStack } from "../support/external.ts";
import { requireDocker } from "../support/tools.ts";

const gate = await requireDocker("the external control plane through the bridge on Docker");

describe.skipIf(gate.skip)(gate.title, () => {
  let stack: ExternalStack;
  const scope = { conversationId: `i19-control-${process.pid}` };

  beforeAll(async () => {
    stack = await startExternalStack();
  }, 120_000);

  afterAll(async () => {
    if (!stack) return;
    // Whatever a failed test left: destroy through the API, then check nothing is left.
    await stack.destroyAll();
    await stack.close();
  }, 180_000);

  const ok = async (tool: string, body: unknown) => {
    const res = await stack.bridge(tool, body);
    expect(res.status, `${tool}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json.result;
  };

  it("runs the whole life of a computer and leaves nothing", async () => {
    const made = await ok("computer_create", { scope });
    expect(made).toMatchObject({
      created: true,
      state: "running",
      key: `conversation:${scope.conversationId}`,
    });
    expect(made.capability).toMatch(/^rcap_/);
    const held = { computerId: made.computerId, capability: made.capability };

    const again = await ok("computer_create", { scope });
    expect(again).toMatchObject({ created: false, computerId: made.computerId });
    expect(again.capability).not.toBe(made.capability);

    const echo = await ok("computer_exec", { ...held, argv: ["sh", "-c", "echo $((6*7)) && whoami"] });
    expect(echo.exitCode).toBe(0);
    expect(echo.stdout.split("\n")[0]).toBe("42");

    await ok("file", { ...held, op: "write", path: "notes/plan.txt", content: "step one\n" });
    expect((await ok("file", { ...held, op: "read", path: "notes/plan.txt" })).content).toBe("step one\n");
    expect((await ok("bash", { ...held, command: "cat notes/plan.txt | tr a-z A-Z" })).stdout).toBe(
      "STEP ONE\n",
    );
    await ok("edit", { ...held, path: "notes/plan.txt", oldText: "one", newText: "two" });
    expect((await ok("read", { ...held, path: "notes/plan.txt" })).content).toBe("step two\n");

    const frame = await ok("computer_observe", held);
    expect(Buffer.from(frame.pngBase64, "base64").subarray(0, 4).toString("hex")).toBe("89504e47");

    await ok("bash", { ...held, command: pageServerCommand(8765) });
    const page = "http://127.0.0.1:8765/";
    expect((await ok("computer_browser", { ...held, action: "navigate", url: page })).title).toBe("none");
    const snap = await ok("computer_browser", { ...held, action: "snapshot" });
    expect(snap.text).toContain("hello external");

    const state = await ok("computers", held);
    expect(state.screens.map((s: { screen: string }) => s.screen)).toEqual([
      `conversation:${scope.conversationId}`,
    ]);
    expect(state.screens[0].display).toEqual(expect.any(Number));

    const gone = await ok("computer_destroy", held);
    expect(gone).toMatchObject({ computerId: made.computerId, destroyed: true, state: "deleted" });
    // Destroy again: the API's destroy is idempotent; the bridge revoked the capability.
    expect(
      (
        await stack.system.rpc(
          "external/computer/destroy",
          { computerId: made.computerId },
          stack.externalToken,
        )
      ).json.result,
    ).toMatchObject({ destroyed: false, state: "deleted" });
    const refused = await stack.bridge("computer_exec", { ...held, argv: ["true"] });
    expect(refused.status).toBe(404);
    expect(refused.json.error.code).toBe("NOT_FOUND");

    expect(await stack.leftovers()).toEqual({ containers: [], liveComputers: [], keys: [] });
  }, 300_000);

  it("a restarted bridge re-adopts from the scope alone; old capabilities and other scopes get nothing", async () => {
    const mine = await ok("computer_create", { scope });
    const other = await ok("computer_create", { scope: { conversationId: `${scope.conversationId}-other` } });
    expect(other.computerId).not.toBe(mine.computerId);

    // Another scope's computer id with my capability, or with none: exactly like a missing one.
    for (const body of [
      { computerId: other.computerId, capability: mine.capability },
      { computerId: other.computerId, capability: "rcap_guess" },
      { computerId: `cmp_${"z".repeat(20)}`, capability: mine.capability },
    ]) {
      const res = await stack.bridge("computer_exec", { ...body, argv: ["true"] });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: { code: "NOT_FOUND", message: "computer not found" } });
    }

    await stack.restartBridge();
    const stale = await stack.bridge("computer_exec", {
      computerId: mine.computerId,
      capability: mine.capability,
      argv: ["true"],
    });
    expect(stale.status).toBe(404);
    const readopted = await ok("computer_create", { scope });
    expect(readopted).toMatchObject({ created: false, computerId: mine.computerId });
    const held = { computerId: readopted.computerId, capability: readopted.capability };
    expect((await ok("computer_exec", { ...held, argv: ["true"] })).exitCode).toBe(0);

    // keep: true leaves the computer for re-adoption; release without keep destroys it.
    expect(await ok("computer_release", { ...held, keep: true })).toEqual({
      kept: true,
      computerId: mine.computerId,
    });
    const kept = await ok("computer_create", { scope });
    expect(kept.computerId).toBe(mine.computerId);
    await ok("computer_release", { computerId: kept.computerId, capability: kept.capability });
    const otherAgain = await ok("computer_create", {
      scope: { conversationId: `${scope.conversationId}-other` },
    });
    await ok("computer_destroy", { computerId: otherAgain.computerId, capability: otherAgain.capability });
    expect(await stack.leftovers()).toEqual({ containers: [], liveComputers: [], keys: [] });
  }, 300_000);

  it("a background command streams, is read by a new client, is killed as a group and goes with the computer", async () => {
    const made = await ok("computer_create", { scope: { conversationId: `${scope.conversationId}-bg` } });
    const held = { computerId: made.computerId, capability: made.capability };
    const { handle } = await ok("computer_process", {
      ...held,
      op: "start",
      argv: ["sh", "-c", "echo first; sleep 65 & while true; do echo tick; sleep 0.2; done"],
    });
    const first = await ok("computer_process", { ...held, op: "read", handle, since: 0, waitMs: 10_000 });
    expect(first).toMatchObject({ running: true, dropped: 0 });
    expect(first.chunks[0]).toMatchObject({
      stream: "stdout",
      offset: 0,
      data: expect.stringContaining("first"),
    });

    // The caller reconnects: a new client, straight on the API, reads on from its offset.
    const api = createExternalClient({ baseUrl: stack.apiUrl, token: stack.externalToken });
    const more = await api.call("external/process/read", {
      computerId: made.computerId,
      handle,
      since: first.next,
      waitMs: 10_000,
    });
    expect(more.chunks[0]?.offset).toBe(first.next);
    expect(more.chunks.map((c) => c.data).join("")).toContain("tick");

    // Another computer's id with this handle: exactly like a missing process.
    const other = await ok("computer_create", { scope: { conversationId: `${scope.conversationId}-bg2` } });
    const foreign = await stack.bridge("computer_process", {
      computerId: other.computerId,
      capability: other.capability,
      op: "read",
      handle,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe("NOT_FOUND");

    expect(await ok("computer_process", { ...held, op: "kill", handle, signal: "SIGKILL" })).toMatchObject({
      signalled: true,
    });
    let done = await api.call("external/process/read", {
      computerId: made.computerId,
      handle,
      since: more.next,
      waitMs: 10_000,
    });
    while (done.running) {
      done = await api.call("external/process/read", {
        computerId: made.computerId,
        handle,
        since: done.next,
        waitMs: 10_000,
      });
    }
    expect(done).toMatchObject({ running: false, exitCode: 137, signal: "SIGKILL" });
    const ps = await ok("computer_exec", { ...held, argv: ["ps", "-eo", "args"] });
    expect(ps.stdout).not.toMatch(/sleep 65/);

    // One still running when the computer is destroyed goes with it.
    await ok("computer_process", { ...held, op: "start", argv: ["sleep", "66"] });
    await ok("computer_destroy", held);
    await ok("computer_destroy", { computerId: other.computerId, capability: other.capability });
    expect(await stack.leftovers()).toEqual({ containers: [], liveComputers: [], keys: [] });
  }, 300_000);

  it("the three tokens are not interchangeable", async () => {
    const user = await stack.system.newTenant("i19-user");
    // The bridge takes only BRIDGE_TOKEN.
    for (const token of [stack.externalToken, user.token, "nope"]) {
      const res = await stack.bridge("computers", { scope }, token);
      expect(res.status).toBe(401);
    }
    // The external surface takes only the external token.
    for (const token of [stack.bridgeToken, user.token]) {
      const res = await stack.system.rpc("external/computer/list", {}, token);
      expect(res.status).toBe(401);
    }
    // User RPCs take neither.
    for (const token of [stack.bridgeToken, stack.externalToken]) {
      const res = await stack.system.rpc("space/list", {}, token);
      expect(res.status).toBe(401);
    }
  });
});
