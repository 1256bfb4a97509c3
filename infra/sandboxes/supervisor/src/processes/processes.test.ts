/**
 * The process manager: the bounded output log's offsets and drop count, UTF-8 cuts,
 * the cap on running processes, owner scoping and group kill, on real host processes.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { completeUtf8Length, OutputLog, ProcessManager } from "./processes.ts";

/** Running (a zombie left to an init that does not reap counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("OutputLog", () => {
  it("keeps offsets monotonic and counts what the bound dropped", () => {
    const log = new OutputLog(10);
    log.append("stdout", Buffer.from("abcd"));
    log.append("stderr", Buffer.from("efgh"));
    expect(log.read(0)).toEqual({
      chunks: [
        { stream: "stdout", offset: 0, data: "abcd" },
        { stream: "stderr", offset: 4, data: "efgh" },
      ],
      next: 8,
      dropped: 0,
    });
    log.append("stdout", Buffer.from("ijkl"));
    // 12 bytes > 10: the oldest whole chunk goes; offsets do not move.
    expect(log.read(0)).toMatchObject({ next: 12, dropped: 4 });
    expect(log.read(0).chunks.map((c) => c.offset)).toEqual([4, 8]);
    expect(log.read(6)).toEqual({
      chunks: [
        { stream: "stderr", offset: 6, data: "gh" },
        { stream: "stdout", offset: 8, data: "ijkl" },
      ],
      next: 12,
      dropped: 0,
    });
    expect(log.read(12)).toEqual({ chunks: [], next: 12, dropped: 0 });
    expect(log.read(99)).toEqual({ chunks: [], next: 12, dropped: 0 });
  });

  it("keeps only the tail of a chunk larger than the bound", () => {
    const log = new OutputLog(4);
    log.append("stdout", Buffer.from("0123456789"));
    expect(log.read(0)).toEqual({
      chunks: [{ stream: "stdout", offset: 6, data: "6789" }],
      next: 10,
      dropped: 6,
    });
  });

  it("finds the last complete UTF-8 character", () => {
    const e = Buffer.from("é"); // c3 a9
    const euro = Buffer.from("€"); // e2 82 ac
    expect(completeUtf8Length(Buffer.concat([Buffer.from("a"), e]))).toBe(3);
    expect(completeUtf8Length(Buffer.concat([Buffer.from("a"), e.subarray(0, 1)]))).toBe(1);
    expect(completeUtf8Length(euro.subarray(0, 2))).toBe(0);
    expect(completeUtf8Length(Buffer.from("abc"))).toBe(3);
  });
});

describe("ProcessManager", () => {
  let workspace: string;
  const managers: ProcessManager[] = [];
  const manager = (options: { maxRunning?: number; bufferBytes?: number } = {}) => {
    const made = new ProcessManager({ workspace, ...options });
    managers.push(made);
    return made;
  };
  beforeAll(async () => {
    workspace = await mkdtemp(path.join(tmpdir(), "rakazo-processes-"));
  });
  afterEach(() => {
    for (const made of managers.splice(0)) made.killAll();
  });
  afterAll(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  const readAll = async (processes: ProcessManager, owner: string, handle: string) => {
    let since = 0;
    let text = "";
    for (;;) {
      const page = await processes.read({ owner, handle, since, waitMs: 2_000 });
      text += page.chunks.map((c) => `${c.stream}:${c.data}`).join("");
      since = page.next;
      if (!page.running) {
        const rest = await processes.read({ owner, handle, since, waitMs: 0 });
        return { ...rest, text: text + rest.chunks.map((c) => `${c.stream}:${c.data}`).join("") };
      }
    }
  };

  it("streams output by offset until the exit, in the workspace folder", async () => {
    const processes = manager();
    const { handle } = processes.start({
      owner: "a",
      argv: ["sh", "-c", 'echo "$GREETING from $(basename "$PWD")"; echo oops >&2; exit 3'],
      cwd: "",
      env: { GREETING: "hi" },
    });
    expect(handle).toMatch(/^prc_[0-9a-f]{32}$/);
    const result = await readAll(processes, "a", handle);
    expect(result.text).toContain(`stdout:hi from ${path.basename(workspace)}\n`);
    expect(result.text).toContain("stderr:oops\n");
    expect(result).toMatchObject({ running: false, exitCode: 3, signal: null, dropped: 0 });
  });

  it("reports bytes lost to the bound and reads on from the oldest kept", async () => {
    const processes = manager({ bufferBytes: 64 * 1024 });
    const { handle } = processes.start({
      owner: "a",
      argv: ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"],
      cwd: "",
    });
    let page = await processes.read({ owner: "a", handle, since: 0, waitMs: 2_000 });
    while (page.running) page = await processes.read({ owner: "a", handle, since: page.next, waitMs: 2_000 });
    const last = await processes.read({ owner: "a", handle, since: 0, waitMs: 0 });
    expect(last.next).toBe(300_000);
    const kept = last.chunks.reduce((sum, c) => sum + c.data.length, 0);
    expect(kept).toBeLessThanOrEqual(64 * 1024);
    expect(last.dropped + kept).toBe(300_000);
  });

  it("refuses past the cap with PROCESS_LIMIT, and frees the slot on exit", async () => {
    const processes = manager({ maxRunning: 2 });
    const first = processes.start({ owner: "a", argv: ["sleep", "30"], cwd: "" });
    processes.start({ owner: "a", argv: ["sleep", "30"], cwd: "" });
    expect(() => processes.start({ owner: "a", argv: ["true"], cwd: "" })).toThrow(
      expect.objectContaining({ code: "PROCESS_LIMIT" }),
    );
    processes.kill({ owner: "a", handle: first.handle, signal: "SIGKILL" });
    await readAll(processes, "a", first.handle);
    expect(processes.running).toBe(1);
    expect(() => processes.start({ owner: "a", argv: ["true"], cwd: "" })).not.toThrow();
  });

  it("answers another owner's handle exactly like an unknown one", async () => {
    const processes = manager();
    const { handle } = processes.start({ owner: "a", argv: ["sleep", "30"], cwd: "" });
    await expect(processes.read({ owner: "b", handle, since: 0, waitMs: 0 })).rejects.toMatchObject({
      code: "PROCESS_NOT_FOUND",
      message: "no such process",
    });
    expect(() => processes.kill({ owner: "b", handle, signal: "SIGKILL" })).toThrow("no such process");
    await expect(
      processes.read({ owner: "a", handle: `prc_${"0".repeat(32)}`, since: 0, waitMs: 0 }),
    ).rejects.toMatchObject({ code: "PROCESS_NOT_FOUND", message: "no such process" });
  });

  it("kill signals the whole group, background children included", async () => {
    const processes = manager();
    const { handle, pid } = processes.start({
      owner: "a",
      argv: ["sh", "-c", "sleep 31 & echo $!; wait"],
      cwd: "",
    });
    const first = await processes.read({ owner: "a", handle, since: 0, waitMs: 2_000 });
    const child = Number(first.chunks[0]?.data.trim());
    expect(child).toBeGreaterThan(0);
    expect(processes.kill({ owner: "a", handle, signal: "SIGTERM" })).toEqual({
      signalled: true,
      running: true,
    });
    const done = await readAll(processes, "a", handle);
    expect(done).toMatchObject({ running: false, exitCode: 143, signal: "SIGTERM" });
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(child)).toBe(false);
    expect(alive(pid)).toBe(false);
  });

  it("refuses a folder outside the workspace", () => {
    expect(() => manager().start({ owner: "a", argv: ["true"], cwd: "../.." })).toThrow(
      expect.objectContaining({ code: "INVALID_ACTION" }),
    );
  });
});
