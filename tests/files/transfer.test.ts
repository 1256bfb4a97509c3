// FIL-3 and the terminal's RPC rules (TRM-4, TRM-7) through the real API on the fake computer and
// real Postgres: upload needs control and the cap holds before anything is stored; download
// needs a running computer and says why not; attach_file's file is kept and downloadable, also
// when the computer is stopped; terminalUrl needs control and foreign ids answer like missing.
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { createComputerTools, type ToolSession } from "@rakazo/computer-tools";
import { MAX_ATTACHMENT_BYTES } from "@rakazo/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

let system: TestSystem;
let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
let computerId: string;

beforeAll(async () => {
  system = await createTestSystem();
  await system.startWorker();
  tenant = await system.newTenant("fil");
  computerId = await runningComputer(system, tenant);
});
afterAll(() => system?.close());

const rpc = (name: string, body: Record<string, unknown>, token = tenant.token) =>
  system.rpc(name, body, token);
const b64 = (text: string) => Buffer.from(text).toString("base64");
const listNames = async (path = "") =>
  ((await rpc("computer/files/list", { computerId, path })).json.result.entries as { name: string }[]).map(
    (e) => e.name,
  );

describe("files: upload, write, download (FIL-3)", () => {
  it("refuses an upload without control and stores nothing", async () => {
    const refused = await rpc("computer/files/upload", {
      computerId,
      botId: tenant.botId,
      path: "no-control.txt",
      contentBase64: b64("x"),
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("NOT_IN_CONTROL");
    const write = await rpc("computer/files/write", {
      computerId,
      botId: tenant.botId,
      path: "w.txt",
      text: "x",
    });
    expect(write.json.error.code).toBe("NOT_IN_CONTROL");
    expect(await listNames()).not.toContain("no-control.txt");
  });

  it("with control: lands in the bot's folder, downloads back; one byte over the cap is refused before it is stored", {
    timeout: 180_000,
  }, async () => {
    await rpc("computer/takeControl", { computerId, botId: tenant.botId });
    const uploaded = await rpc("computer/files/upload", {
      computerId,
      botId: tenant.botId,
      path: "notes/hello.txt",
      contentBase64: b64("hello upload"),
    });
    expect(uploaded.status).toBe(200);
    // A Team Computer's bot works in bots/<bot id>/ (CMP-1): the answer is the workspace path.
    const folder = `bots/${tenant.botId}`;
    expect(uploaded.json.result).toEqual({ path: `${folder}/notes/hello.txt`, size: 12 });
    const downloaded = await rpc("computer/files/download", {
      computerId,
      path: `${folder}/notes/hello.txt`,
    });
    expect(downloaded.json.result).toMatchObject({
      name: "hello.txt",
      size: 12,
      contentBase64: b64("hello upload"),
    });

    const written = await rpc("computer/files/write", {
      computerId,
      botId: tenant.botId,
      path: "notes/text.md",
      text: "# hi\n",
    });
    expect(written.json.result).toEqual({ path: `${folder}/notes/text.md`, size: 5 });

    const atCap = Buffer.alloc(MAX_ATTACHMENT_BYTES, 7);
    const over = Buffer.alloc(MAX_ATTACHMENT_BYTES + 1, 7);
    const tooBig = await rpc("computer/files/upload", {
      computerId,
      botId: tenant.botId,
      path: "big.bin",
      contentBase64: over.toString("base64"),
    });
    expect(tooBig.status).toBe(413);
    expect(tooBig.json.error.code).toBe("FILE_TOO_LARGE");
    expect(await listNames(folder)).not.toContain("big.bin");
    const fits = await rpc("computer/files/upload", {
      computerId,
      botId: tenant.botId,
      path: "big.bin",
      contentBase64: atCap.toString("base64"),
    });
    expect(fits.json.result).toEqual({ path: `${folder}/big.bin`, size: MAX_ATTACHMENT_BYTES });

    const outside = await rpc("computer/files/upload", {
      computerId,
      botId: tenant.botId,
      path: "../../outside.txt",
      contentBase64: b64("x"),
    });
    expect(outside.json.error.code).toBe("INVALID_PATH");
    await rpc("computer/releaseControl", { computerId, botId: tenant.botId });
  });

  it("with control: an upload may land in shared/ (CMP-1), never in another bot's folder or the top level", async () => {
    await rpc("computer/takeControl", { computerId, botId: tenant.botId });
    const upload = (path: string) =>
      rpc("computer/files/upload", { computerId, botId: tenant.botId, path, contentBase64: b64("team") });
    const shared = await upload("../../shared/for-everyone.txt");
    expect(shared.status).toBe(200);
    expect(shared.json.result).toEqual({ path: "shared/for-everyone.txt", size: 4 });
    expect(await listNames("shared")).toContain("for-everyone.txt");
    for (const path of ["../../shared", "../other-bot/x.txt", "../../top.txt", ".."]) {
      const refused = await upload(path);
      expect([path, refused.json.error?.code]).toEqual([path, "INVALID_PATH"]);
    }
    expect(await listNames()).not.toContain("top.txt");
    await rpc("computer/releaseControl", { computerId, botId: tenant.botId });
  });

  it("terminalUrl needs control (or screens configured); a foreign computer answers like a missing one", async () => {
    const noControl = await rpc("computer/terminalUrl", { computerId, botId: tenant.botId });
    expect(noControl.json.error.code).toMatch(/NOT_IN_CONTROL|UNSUPPORTED/);
    const other = await system.newTenant("fil-other");
    const foreign = await rpc("computer/terminalUrl", { computerId, botId: other.botId }, other.token);
    const missing = await rpc(
      "computer/terminalUrl",
      { computerId: `cmp_${"q".repeat(20)}`, botId: other.botId },
      other.token,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.json.error).toEqual(missing.json.error);
    const foreignDownload = await rpc(
      "computer/files/download",
      { computerId, path: "notes/hello.txt" },
      other.token,
    );
    expect(foreignDownload.json.error.code).toBe("NOT_FOUND");
  });
});

describe("attach_file keeps what it attaches", () => {
  it("stores the file; the person downloads it, also after the computer stopped, where a live download says why not", async () => {
    const { run, lease } = (await rpc("run/start", { computerId, botId: tenant.botId })).json.result;
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
    const call = (name: string, args: unknown) =>
      (tools.get(name) as AgentTool).execute("call", args as never);
    await call("write_file", { path: "report.csv", content: "a,b\n1,2\n" });
    const attached = await call("attach_file", { path: "report.csv", note: "the report" });
    const attachmentId = (attached.details as { attachment: { id: string } }).attachment.id;
    expect(attachmentId).toMatch(/^att_/);
    await rpc("run/complete", { runId: run.id, fencingToken: lease.fencingToken });

    const listed = (await rpc("computer/attachments/list", { computerId })).json.result.attachments;
    expect(listed).toEqual([
      // The workspace path, as files/list names it (the bot attached `report.csv` from its folder).
      expect.objectContaining({
        id: attachmentId,
        path: `bots/${tenant.botId}/report.csv`,
        size: 8,
        note: "the report",
      }),
    ]);
    await rpc("computer/stop", { computerId });
    await eventually(async () =>
      (await rpc("computer/get", { computerId })).json.result.state === "stopped" ? true : undefined,
    );
    const live = await rpc("computer/files/download", {
      computerId,
      path: `bots/${tenant.botId}/report.csv`,
    });
    expect(live.status).toBe(409);
    expect(live.json.error).toMatchObject({ code: "COMPUTER_NOT_READY", details: { state: "stopped" } });
    const stored = await rpc("computer/attachments/download", { computerId, attachmentId });
    expect(Buffer.from(stored.json.result.contentBase64, "base64").toString()).toBe("a,b\n1,2\n");
    expect(stored.json.result.name).toBe("report.csv");
  });
});
