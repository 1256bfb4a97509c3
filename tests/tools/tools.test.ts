// TOOL-2, TOOL-3, TOOL-4 and CMP-3 through the real tools on the fake computer and real Postgres.
import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { ToolSession } from "@rakazo/computer-tools";
import { createComputerTools } from "@rakazo/computer-tools";
import type { SandboxProvider } from "@rakazo/sandbox";
import {
  type ActivityEvent,
  acquireExecutionLease,
  listActivity,
  revokeExecutionLease,
  type ServiceContext,
  startActivityFeed,
} from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
});
afterAll(() => system?.close());

async function newRun(label: string, options: { ctx?: ServiceContext; vision?: boolean } = {}) {
  const tenant = await system.newTenant(label);
  const computerId = await runningComputer(system, tenant);
  const { run, lease } = (await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token))
    .json.result;
  const session: ToolSession = {
    ctx: options.ctx ?? system.ctx,
    caller: { userId: tenant.userId, tokenId: (tenant as unknown as { tokenId: string }).tokenId },
    computerId,
    botId: tenant.botId,
    runId: run.id,
    fencingToken: lease.fencingToken,
    model: { vision: options.vision ?? true },
  };
  const tools = new Map(createComputerTools(session).map((t) => [t.name, t]));
  const call = (name: string, args: unknown) => (tools.get(name) as AgentTool).execute("call", args as never);
  return { tenant, computerId, session, tools, call };
}

const images = (result: { content: { type: string }[] }) =>
  result.content.filter((c) => c.type === "image").length;

describe("desktop tools", () => {
  it("two identical observes return one image; the second keeps the metadata (TOOL-2)", async () => {
    const { call } = await newRun("obi");
    const first = await call("computer_observe", {});
    const second = await call("computer_observe", {});
    expect(images(first)).toBe(1);
    expect(first.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(images(second)).toBe(0);
    expect(second.details).toMatchObject({
      imageOmitted: true,
      frameHash: (first.details as { frameHash: string }).frameHash,
    });
    expect(JSON.stringify(second.content)).toContain("previous screenshot remains valid");
  });

  it("refuses the third identical click that leaves the frame unchanged (TOOL-3)", async () => {
    // A screen whose app ignores clicks: the fake desktop, minus click effects.
    const ignoring: SandboxProvider = {
      ...system.provider,
      sandbox(ref) {
        const sandbox = system.provider.sandbox(ref);
        const desktop = sandbox.desktop;
        if (!desktop) return sandbox;
        return {
          ...sandbox,
          desktop: {
            ...desktop,
            act: (botId, actions) =>
              desktop.act(
                botId,
                actions.filter((a) => a.type !== "click"),
              ),
          },
        };
      },
    };
    const { call } = await newRun("tess", { ctx: { ...system.ctx, provider: ignoring } });
    const click = { actions: [{ type: "click", x: 10, y: 12 }] };
    const one = await call("computer_act", click);
    const two = await call("computer_act", click);
    expect(JSON.stringify(one.content)).toContain("did not change");
    expect(JSON.stringify(two.content)).toContain("did not change");
    await expect(call("computer_act", click)).rejects.toThrow(/Refused.*browser_snapshot/s);
    // A different action is still allowed, and it resets the streak once the screen changes.
    await call("computer_act", { actions: [{ type: "type", text: "hi" }] });
    await expect(call("computer_act", click)).resolves.toBeDefined();
  });

  it("without vision there is no computer_observe and the descriptions point at page tools and takeover (BRW-6)", async () => {
    const { tools } = await newRun("blind", { vision: false });
    expect(tools.has("computer_observe")).toBe(false);
    expect(tools.has("browser_snapshot")).toBe(true);
    expect(tools.get("computer_act")?.description).toMatch(/request_takeover/);
    expect(tools.get("browser_act")?.description).toMatch(/request_takeover/);
  });
});

describe("activity (TOOL-4)", () => {
  it("records shell with the command redacted and streams it live; read-only tools leave no event", async () => {
    const { call, computerId, session } = await newRun("reda");
    const feed = await startActivityFeed({ db: system.ctx.db, log: system.ctx.log });
    const live: ActivityEvent[] = [];
    const unsubscribe = feed.subscribe(computerId, (event) => live.push(event));
    try {
      await call("list_files", {});
      await call("shell", { command: 'curl -H "Authorization: Bearer abc123" http://127.0.0.1:9/x' });
      await call("write_file", { path: "notes/a.txt", content: "hello" });
      await expect(call("read_file", { path: "missing.txt" })).rejects.toThrow();
      await eventually(async () => (live.length >= 2 ? true : undefined), 5_000);
    } finally {
      unsubscribe();
      await feed.close();
    }
    const { events } = await listActivity(system.ctx, session.caller, { computerId });
    expect(events.map((e) => e.payload.tool)).toEqual(["shell", "write_file"]);
    expect(JSON.stringify(events)).not.toContain("abc123");
    expect(events[0]?.payload.command).toContain("Authorization: [REDACTED]");
    expect(events[0]?.payload).toMatchObject({ ok: false }); // the fake computer has no curl
    expect(events[0]?.payload.exitCode).not.toBe(0);
    expect(events[1]?.payload).toMatchObject({ line: "write_file notes/a.txt (5 bytes)", ok: true });
    expect(live.map((e) => e.id)).toEqual(events.map((e) => e.id));

    const page = await listActivity(system.ctx, session.caller, { computerId, limit: 1 });
    expect(page.events).toHaveLength(1);
    const rest = await listActivity(system.ctx, session.caller, { computerId, after: page.next as string });
    expect(rest.events.map((e) => e.id)).toEqual([events[1]?.id]);
  });

  it("open_path and launch_app leave their lines; shell keeps the redacted tail of long output", async () => {
    // The fake computer has no setsid: these programs "start" here, and their argv is kept.
    const started: string[][] = [];
    const starting: SandboxProvider = {
      ...system.provider,
      sandbox(ref) {
        const sandbox = system.provider.sandbox(ref);
        return {
          ...sandbox,
          exec: async (request) => {
            if (request.argv[0] !== "setsid") return sandbox.exec(request);
            started.push([...request.argv]);
            return { exitCode: 0, stdout: "", stderr: "", timedOut: false };
          },
        };
      },
    };
    const { call, computerId, session } = await newRun("apps", {
      ctx: { ...system.ctx, provider: starting },
    });
    await call("open_path", { path: "notes/plan.txt" });
    await call("launch_app", { app: "gedit", args: ["my notes.txt"] });
    expect(started).toEqual([
      ["setsid", "-f", "xdg-open", "notes/plan.txt"],
      ["setsid", "-f", "gedit", "my notes.txt"],
    ]);
    // Longer than the kept tail, with a credential near its end.
    const output = `START-OF-OUTPUT\n${"x".repeat(3_000)}\nAuthorization: Bearer zzz999secret\nEND-OF-OUTPUT\n`;
    await call("write_file", { path: "notes/big.txt", content: output });
    await call("shell", { argv: ["cat", "notes/big.txt"] });
    await call("shell", { argv: ["cat", "notes/missing.txt"] });

    const { events } = await listActivity(system.ctx, session.caller, { computerId });
    const byTool = (tool: string) => events.find((e) => e.payload.tool === tool)?.payload;
    expect(byTool("open_path")).toMatchObject({ line: "open_path notes/plan.txt", ok: true });
    expect(byTool("launch_app")).toMatchObject({ line: "launch_app gedit 'my notes.txt'", ok: true });
    const shell = byTool("shell") ?? {};
    expect(shell).toMatchObject({
      line: "$ cat notes/big.txt → exit 0",
      exitCode: 0,
      ok: true,
      outputTruncated: true,
    });
    const tail = String(shell.outputTail);
    expect(tail.endsWith("END-OF-OUTPUT\n")).toBe(true);
    expect(tail).not.toContain("START-OF-OUTPUT");
    expect(tail).toContain("Authorization: [REDACTED]");
    expect(JSON.stringify(events)).not.toContain("zzz999secret");
    expect(tail.length).toBeLessThanOrEqual(2_000);
    expect(tail.length).toBeGreaterThan(1_900);
    expect(shell.stderrTail).toBeUndefined();
    // The error stream is kept apart from the output, so Activity shows it as errors.
    const failed = events.find((e) => e.payload.command === "cat notes/missing.txt")?.payload;
    expect(failed).toMatchObject({ ok: false, exitCode: 1, outputTail: "", stderrTruncated: false });
    expect(String(failed?.stderrTail)).toContain("notes/missing.txt: No such file or directory");
  });

  it("a superseded run's tools are refused before they touch the computer (CMP-3)", async () => {
    const { call, tenant, computerId, session } = await newRun("fen");
    // The lease is revoked and taken by another holder; the first run's token is now stale.
    await revokeExecutionLease(system.ctx, { computerId, botId: tenant.botId });
    const newer = await acquireExecutionLease(system.ctx, {
      computerId,
      botId: tenant.botId,
      holderId: "run_other",
    });
    expect(newer.fencingToken).toBeGreaterThan(session.fencingToken);
    await expect(call("write_file", { path: "x.txt", content: "late" })).rejects.toMatchObject({
      code: "STALE_LEASE",
    });
    const { events } = await listActivity(system.ctx, session.caller, { computerId });
    expect(events.map((e) => [e.payload.tool, e.payload.ok])).toEqual([["write_file", false]]);
  });
});
