// The one path rule of every file surface (docs/agent-tools.md) through the real API on the fake
// computer and real Postgres: a relative path is resolved from the named bot's folder (the
// agent's tools, upload/write, and list/read/download given a botId) or from the workspace root
// (no bot named: list/read/download without botId, the external file RPCs); every answer carries
// the resolved workspace path. So a write and a read of the same relative path agree on a Team
// and a Private Computer, and the agent and a person name the bot's files alike.
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { createComputerTools, type ToolSession } from "@rakazo/computer-tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

const EXTERNAL_TOKEN = `ext_${"p".repeat(40)}`;
let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
/** The Team and the Private Computer the first two tests made. */
const made: string[] = [];

beforeAll(async () => {
  system = await createTestSystem({ externalToken: EXTERNAL_TOKEN });
  await system.startWorker();
  tenant = await system.newTenant("paths");
}, 60_000);
afterAll(() => system?.close());

const rpc = (name: string, body: Record<string, unknown>, token = tenant.token) =>
  system.rpc(name, body, token);
const ok = async (name: string, body: Record<string, unknown>, token = tenant.token) => {
  const res = await rpc(name, body, token);
  expect(res.status, `${name} ${JSON.stringify(body)}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
};
const code = async (name: string, body: Record<string, unknown>) => (await rpc(name, body)).json.error?.code;
const b64 = (text: string) => Buffer.from(text).toString("base64");

/** The agent's file tools for one run of the tenant's bot on `computerId`. */
async function agentTools(computerId: string) {
  const { run, lease } = await ok("run/start", { computerId, botId: tenant.botId });
  const session: ToolSession = {
    ctx: system.ctx,
    caller: { userId: tenant.userId, tokenId: tenant.tokenId },
    computerId,
    botId: tenant.botId,
    runId: run.id,
    fencingToken: lease.fencingToken,
    model: { vision: true },
  };
  const tools = new Map(createComputerTools(session).map((t) => [t.name, t]));
  const call = async (name: string, args: unknown) => {
    const result = await (tools.get(name) as AgentTool).execute("call", args as never);
    return (result.content[0] as { text: string }).text;
  };
  const done = () => ok("run/complete", { runId: run.id, fencingToken: lease.fencingToken });
  return { call, done };
}

/** Every surface's write-then-read of the same relative path, for a bot whose folder is `folder`. */
async function roundTrips(computerId: string, folder: string) {
  const inFolder = (path: string) => (folder ? `${folder}/${path}` : path);

  // The agent's tools: relative to the bot's folder, like its shell.
  const agent = await agentTools(computerId);
  await agent.call("write_file", { path: "notes/agent.txt", content: "from the agent" });
  expect(await agent.call("read_file", { path: "notes/agent.txt" })).toBe("from the agent");
  expect(await agent.call("list_files", { path: "notes" })).toContain("notes/agent.txt");
  const attached = await agent.call("attach_file", { path: "./notes/agent.txt" });
  expect(attached).toContain("./notes/agent.txt");
  await agent.done();
  // A person names the same file by the same relative path with the bot, or by its workspace path.
  const byBot = await ok("computer/files/read", { computerId, botId: tenant.botId, path: "notes/agent.txt" });
  expect(byBot).toMatchObject({ path: inFolder("notes/agent.txt"), text: "from the agent" });
  expect(await ok("computer/files/read", { computerId, path: byBot.path })).toMatchObject({
    path: inFolder("notes/agent.txt"),
    text: "from the agent",
  });
  // The attachment records the workspace path, as files/list names it.
  const { attachments } = await ok("computer/attachments/list", { computerId, botId: tenant.botId });
  expect(attachments[0]).toMatchObject({ path: inFolder("notes/agent.txt"), name: "agent.txt" });

  // A person's write and upload (with control), read back every way.
  await ok("computer/takeControl", { computerId, botId: tenant.botId });
  const written = await ok("computer/files/write", {
    computerId,
    botId: tenant.botId,
    path: "notes/hello.txt",
    text: "hello",
  });
  expect(written).toEqual({ path: inFolder("notes/hello.txt"), size: 5 });
  for (const read of [
    { botId: tenant.botId, path: "notes/hello.txt" },
    { botId: tenant.botId, path: "./notes/../notes/hello.txt" },
    { path: written.path },
  ]) {
    expect(await ok("computer/files/read", { computerId, ...read }), JSON.stringify(read)).toMatchObject({
      path: written.path,
      text: "hello",
    });
    expect(await ok("computer/files/download", { computerId, ...read })).toMatchObject({
      path: written.path,
      name: "hello.txt",
      contentBase64: b64("hello"),
    });
  }
  const listed = await ok("computer/files/list", { computerId, botId: tenant.botId, path: "notes" });
  expect(listed.path).toBe(inFolder("notes"));
  expect(listed.entries.map((e: { path: string }) => e.path).sort()).toEqual([
    inFolder("notes/agent.txt"),
    inFolder("notes/hello.txt"),
  ]);
  const mine = await ok("computer/files/list", { computerId, botId: tenant.botId });
  expect(mine.path).toBe(folder);
  const uploaded = await ok("computer/files/upload", {
    computerId,
    botId: tenant.botId,
    path: "./up.txt",
    contentBase64: b64("uploaded"),
  });
  expect(uploaded).toEqual({ path: inFolder("up.txt"), size: 8 });
  expect(await ok("computer/files/read", { computerId, botId: tenant.botId, path: "up.txt" })).toMatchObject({
    path: uploaded.path,
    text: "uploaded",
  });
  await ok("computer/releaseControl", { computerId, botId: tenant.botId });

  // The agent reads what the person wrote by the same relative path.
  const again = await agentTools(computerId);
  expect(await again.call("read_file", { path: "notes/hello.txt" })).toBe("hello");
  await again.done();

  // The guards hold for the bot-relative form too: nothing leaves the workspace, no absolute path.
  const leaving = folder ? `${folder.replace(/[^/]+/g, "..")}/../etc/passwd` : "../etc/passwd";
  for (const path of [leaving, "/etc/passwd", "a\0b"]) {
    expect(await code("computer/files/read", { computerId, botId: tenant.botId, path })).toBe("INVALID_PATH");
    expect(await code("computer/files/list", { computerId, botId: tenant.botId, path })).toBe("INVALID_PATH");
    expect(await code("computer/files/download", { computerId, botId: tenant.botId, path })).toBe(
      "INVALID_PATH",
    );
  }
  expect(await code("computer/files/read", { computerId, path: "../x" })).toBe("INVALID_PATH");
}

describe("one path rule for every file surface", () => {
  it("on a Team Computer: relative paths start in bots/<bot-id>/ wherever the bot is named", {
    timeout: 120_000,
  }, async () => {
    const computerId = await runningComputer(system, tenant);
    made.push(computerId);
    await roundTrips(computerId, `bots/${tenant.botId}`);
    // Without a bot, the same relative path is the workspace root's: not the bot's file.
    expect(await code("computer/files/read", { computerId, path: "notes/hello.txt" })).toBe("FILE_NOT_FOUND");
    // `..` climbs from the bot's folder to shared/, which the agent reaches the same way.
    const shared = await ok("computer/files/list", { computerId, botId: tenant.botId, path: "../../shared" });
    expect(shared.path).toBe("shared");
  });

  it("on a Private Computer: the bot's folder is the workspace root, so both forms agree", {
    timeout: 120_000,
  }, async () => {
    const computerId = await runningComputer(system, tenant, { mode: "private", botId: tenant.botId });
    made.push(computerId);
    await roundTrips(computerId, "");
    expect(await ok("computer/files/read", { computerId, path: "notes/hello.txt" })).toMatchObject({
      text: "hello",
    });
  });

  it("a botId must name a bot of the computer: another space's bot is NOT_FOUND", async () => {
    expect(made).toHaveLength(2);
    const other = await system.newTenant("paths-other");
    for (const computerId of made) {
      for (const name of ["computer/files/list", "computer/files/read", "computer/files/download"]) {
        const foreign = await rpc(name, { computerId, botId: other.botId, path: "x" });
        expect(foreign.json.error.code, name).toBe("NOT_FOUND");
      }
    }
  });

  it("external file RPCs: relative to the workspace root, answering the resolved path", async () => {
    const ext = async (name: string, body: Record<string, unknown>) => ok(name, body, EXTERNAL_TOKEN);
    const { computer } = await ext("external/computer/create", { screen: "paths" });
    const computerId = computer.computerId;
    const written = await ext("external/file/write", { computerId, path: "./notes/a.txt", content: "ext" });
    expect(written).toEqual({ path: "notes/a.txt", bytes: 3 });
    for (const path of ["notes/a.txt", "notes/./a.txt", "notes/../notes/a.txt"]) {
      expect(await ext("external/file/read", { computerId, path })).toEqual({
        path: "notes/a.txt",
        content: "ext",
        bytes: 3,
      });
    }
    // The same file as exec sees it from its default folder, the workspace root.
    const cat = await ext("external/computer/exec", { computerId, argv: ["cat", "notes/a.txt"] });
    expect(cat.stdout).toBe("ext");
    for (const path of ["../a.txt", "/etc/passwd"]) {
      const refused = await rpc("external/file/read", { computerId, path }, EXTERNAL_TOKEN);
      expect(refused.json.error.code).toBe("INVALID_PATH");
    }
    await ext("external/computer/destroy", { computerId });
  });
});
