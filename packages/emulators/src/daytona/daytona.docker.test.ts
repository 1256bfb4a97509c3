/**
 * The REAL `@daytonaio/sdk` (0.218.0) against the Daytona emulator, through its `apiUrl` and
 * the toolbox and preview URLs the emulator returns; every sandbox a real container of the
 * computer image with `--network none` (PRV-1).
 */

import { Daytona, DaytonaNotFoundError } from "@daytonaio/sdk";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMachinePool } from "../machines.ts";
import { type DaytonaEmulator, startDaytonaEmulator } from "./emulator.ts";

const gate = await requireDocker("Daytona emulator with the real SDK");

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({
    image: COMPUTER_IMAGE,
    emulator: "daytona",
    owner: "i15-daytona-emulator-test",
  });
  let clock = Date.parse("2026-12-01T12:00:00Z");
  let emulator: DaytonaEmulator;
  let daytona: Daytona;

  beforeAll(async () => {
    emulator = await startDaytonaEmulator({ machines, apiKey: "dtn_test_key", now: () => clock });
    daytona = new Daytona({
      apiKey: "dtn_test_key",
      apiUrl: emulator.apiUrl,
      target: "local",
      useDeprecatedPolling: true,
    });
  });
  afterAll(async () => {
    await emulator?.close();
    await machines.removeAll();
  });

  it("create, labels, sessions with exit codes and split streams, files, stop/start, delete", async () => {
    const sandbox = await daytona.create(
      { labels: { "rakazo.computer": "cmp_sdk" }, autoStopInterval: 0 },
      { timeout: 60 },
    );
    expect(sandbox.state).toBe("started");
    const found = [];
    for await (const s of await daytona.list({ labels: { "rakazo.computer": "cmp_sdk" } })) found.push(s.id);
    expect(found).toEqual([sandbox.id]);

    // A command exiting non-zero is a result, not an exception.
    const combined = await sandbox.process.executeCommand("echo hi; exit 4");
    expect(combined).toMatchObject({ exitCode: 4, result: "hi\n" });

    await sandbox.process.createSession("s1");
    const sync = await sandbox.process.executeSessionCommand("s1", {
      command: "echo out; echo err >&2; exit 3",
    });
    expect(sync).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n" });
    const started = await sandbox.process.executeSessionCommand("s1", {
      command: "echo a; sleep 0.3; echo b >&2",
      runAsync: true,
    });
    const out: string[] = [];
    const err: string[] = [];
    await sandbox.process.getSessionCommandLogs(
      "s1",
      started.cmdId ?? "",
      (c) => out.push(c),
      (c) => err.push(c),
    );
    expect(out.join("")).toBe("a\n");
    expect(err.join("")).toBe("b\n");
    expect((await sandbox.process.getSessionCommand("s1", started.cmdId ?? "")).exitCode).toBe(0);

    await sandbox.fs.uploadFile(Buffer.from([9, 8, 7, 0]), "/home/user/x/y.bin");
    expect([...(await sandbox.fs.downloadFile("/home/user/x/y.bin"))]).toEqual([9, 8, 7, 0]);
    await expect(sandbox.fs.downloadFile("/home/user/nope")).rejects.toThrow(/not found/i);

    await sandbox.stop();
    expect(sandbox.state).toBe("stopped");
    await sandbox.start();
    expect(sandbox.state).toBe("started");
    expect((await sandbox.fs.downloadFile("/home/user/x/y.bin")).length).toBe(4);

    await sandbox.delete();
    expect((await daytona.get(sandbox.id)).state).toBe("destroyed");
    await emulator.vanish(sandbox.id);
    await expect(daytona.get(sandbox.id)).rejects.toBeInstanceOf(DaytonaNotFoundError);
  });

  it("preview links admit only the x-daytona-preview-token header, and a restart resets the token", async () => {
    const sandbox = await daytona.create({ autoStopInterval: 0 }, { timeout: 60 });
    await sandbox.process.executeCommand(
      "mkdir -p /tmp/www && echo preview > /tmp/www/index.html && (cd /tmp/www && nohup python3 -m http.server 8123 >/dev/null 2>&1 &); sleep 1",
    );
    const link = await sandbox.getPreviewLink(8123);
    expect(link.url).not.toContain(link.token);
    expect((await fetch(link.url)).status).toBe(401);
    expect(await (await fetch(link.url, { headers: { "x-daytona-preview-token": link.token } })).text()).toBe(
      "preview\n",
    );
    await sandbox.stop();
    await sandbox.start();
    await sandbox.process.executeCommand(
      "(cd /tmp/www && nohup python3 -m http.server 8123 >/dev/null 2>&1 &); sleep 1",
    );
    expect(
      (
        await fetch((await sandbox.getPreviewLink(8123)).url, {
          headers: { "x-daytona-preview-token": link.token },
        })
      ).status,
    ).toBe(401);
    const fresh = await sandbox.getPreviewLink(8123);
    expect(fresh.token).not.toBe(link.token);
    expect((await fetch(fresh.url, { headers: { "x-daytona-preview-token": fresh.token } })).status).toBe(
      200,
    );
    await sandbox.delete();
  });

  it("auto-stop acts on the emulated clock; activity through the SDK restarts its count", async () => {
    const sandbox = await daytona.create({ autoStopInterval: 15 }, { timeout: 60 });
    clock += 10 * 60_000;
    await sandbox.refreshActivity();
    clock += 10 * 60_000;
    expect(await emulator.sweep()).not.toContain(sandbox.id);
    clock += 6 * 60_000;
    expect(await emulator.sweep()).toContain(sandbox.id);
    await sandbox.refreshData();
    expect(sandbox.state).toBe("stopped");
    await sandbox.delete();
  });
});
