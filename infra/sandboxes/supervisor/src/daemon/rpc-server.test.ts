/** The RPC dispatch of `page.*` (BRW-1): lazy desktop start, cap, and error codes. No processes. */
import { mkdtempSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DesktopSlots } from "../desktops/desktop-slots.ts";
import type { DesktopStack, StackLauncher } from "../desktops/desktop-stack.ts";
import type { StackPlan } from "../desktops/stack-argv.ts";
import { createContext } from "./context.ts";
import { dispatch, toAnswer } from "./rpc-server.ts";

/** A port nothing listens on: the "browser" of an in-memory desktop is unreachable. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

async function setup(screenLimit = 0) {
  const started: StackPlan[] = [];
  const launcher: StackLauncher = {
    async start(plan) {
      started.push(plan);
      const stack: DesktopStack = {
        plan,
        capture: async () => ({ png: Buffer.alloc(0), width: 1, height: 1, frameHash: "h" }),
        runStep: async () => undefined,
        serveScreen: async () => undefined,
        teardown: async () => undefined,
      };
      return stack;
    },
  };
  const supervisor = new DesktopSlots({
    launcher,
    workspace: mkdtempSync(path.join(os.tmpdir(), "sup-ws-")),
    layout: {
      runDir: mkdtempSync(path.join(os.tmpdir(), "sup-run-")),
      displayBase: 10,
      debugPortBase: await closedPort(),
    },
    screenLimit,
  });
  const context = createContext({ desktops: supervisor });
  const call = async (method: string, params: Record<string, unknown>) => {
    try {
      return { ok: true, result: await dispatch(context, method, params) };
    } catch (error) {
      return toAnswer(error);
    }
  };
  return { supervisor, started, call };
}

describe("page.* dispatch", () => {
  it("starts the bot's desktop first (CMP-4) and drives that desktop's browser port", async () => {
    const { supervisor, started, call } = await setup();
    const answer = await call("page.snapshot", { botId: "ada" });
    expect(started.map((plan) => plan.index)).toEqual([0]);
    expect(supervisor.list().map((slot) => [slot.botId, slot.state])).toEqual([["ada", "running"]]);
    // The in-memory desktop has no Chromium behind its port: reported as an unreachable desktop.
    expect(answer).toMatchObject({
      ok: false,
      error: { code: "DESKTOP_UNAVAILABLE", message: expect.stringContaining("not reachable") },
    });
    // The next page call reuses the running desktop.
    await call("page.act", { botId: "ada", actions: [{ type: "wait", ms: 1 }] });
    expect(started).toHaveLength(1);
  });

  it("keeps the cap: past SANDBOX_TEAM_SCREEN_LIMIT a page call is MULTI_SCREEN_UNAVAILABLE", async () => {
    const { supervisor, call } = await setup(1);
    await supervisor.observe("ada");
    supervisor.setControlled("ada", true);
    const answer = await call("page.navigate", { botId: "grace", url: "http://127.0.0.1/" });
    expect(answer).toMatchObject({ ok: false, error: { code: "MULTI_SCREEN_UNAVAILABLE" } });
  });

  it("refuses a call without a bot as INVALID_ACTION, starting nothing", async () => {
    const { started, call } = await setup();
    expect(await call("page.snapshot", {})).toMatchObject({ ok: false, error: { code: "INVALID_ACTION" } });
    expect(started).toHaveLength(0);
  });
});

describe("params validated with the protocol's method table", () => {
  it("refuses malformed params as INVALID_ACTION before anything runs", async () => {
    const { supervisor, started, call } = await setup();
    for (const [method, params] of [
      ["desktop.setControlled", { botId: "ada", controlled: "yes" }],
      ["desktop.observe", { botId: 7 }],
      ["desktop.act", { botId: "ada", actions: "click" }],
      ["page.act", { botId: "ada", actions: [{ type: "hover", ref: "e1" }] }],
      ["page.act", { botId: "ada", actions: [] }],
      ["page.navigate", { botId: "ada" }],
      ["screens.revoke", { rules: [{ botId: "ada" }] }],
    ] as const) {
      const answer = await call(method, params);
      expect(answer, `${method} ${JSON.stringify(params)}`).toMatchObject({
        ok: false,
        error: { code: "INVALID_ACTION", message: expect.stringContaining(method) },
      });
    }
    expect(started).toHaveLength(0);
    expect(supervisor.list()).toEqual([]);
  });

  it("answers an unknown method with SANDBOX_PROVIDER_ERROR", async () => {
    const { call } = await setup();
    expect(await call("desktop.format", {})).toMatchObject({
      ok: false,
      error: { code: "SANDBOX_PROVIDER_ERROR" },
    });
  });

  it("fails a malformed desktop action at its index, after the ones before it ran", async () => {
    const { call } = await setup();
    const answer = await call("desktop.act", {
      botId: "ada",
      actions: [
        { type: "wait", ms: 0 },
        { type: "wait", ms: 60_000 },
      ],
    });
    expect(answer).toMatchObject({
      ok: true,
      result: { completed: 1, total: 2, error: { code: "INVALID_ACTION", index: 1 } },
    });
  });
});
