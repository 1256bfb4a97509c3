/**
 * Rakazo's Boat client against the Boat emulator, whose sandboxes are real containers of the
 * computer image (`--network none`): the lifecycle the adapter relies on (PRV-1,
 * PRV-3, SCR-4).
 */
import { randomUUID } from "node:crypto";
import { type BoatApiError, createBoatClient } from "@rakazo/sandbox/boat";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMachinePool } from "../machines.ts";
import { type BoatEmulator, startBoatEmulator } from "./emulator.ts";

const gate = await requireDocker("Boat emulator with the Boat client");

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({
    image: COMPUTER_IMAGE,
    emulator: "boat",
    owner: "i15-boat-emulator-test",
  });
  let clock = Date.parse("2026-12-01T12:00:00Z");
  let emulator: BoatEmulator;
  let boat: ReturnType<typeof createBoatClient>;
  const waits: number[] = [];

  beforeAll(async () => {
    emulator = await startBoatEmulator({ machines, apiKey: "boat_test_key", now: () => clock });
    boat = createBoatClient({
      baseUrl: emulator.url,
      apiKey: "boat_test_key",
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((r) => setTimeout(r, 10));
      },
    });
  });
  afterAll(async () => {
    await emulator?.close();
    await machines.removeAll();
  });

  const ready = async (id: string) => {
    await emulator.settled();
    return boat.get(id);
  };

  it("create is idempotent by key; commands, files and a protected port work; stop archives; resume rotates the port token", async () => {
    const key = randomUUID();
    const created = await boat.create({ noEnv: true, ttlSeconds: 7200 }, { idempotencyKey: key });
    expect(created.id).toMatch(/^bx_[23456789abcdefghjkmnpqrstuvwxyz]{8}$/);
    expect(created.state).toBe("provisioning");
    // The same key and body: the same sandbox, not a second one.
    expect((await boat.create({ noEnv: true, ttlSeconds: 7200 }, { idempotencyKey: key })).id).toBe(
      created.id,
    );
    const reused = await boat.create({ noEnv: false }, { idempotencyKey: key }).catch((e: unknown) => e);
    expect((reused as BoatApiError).code).toBe("idempotency_key_reused");
    expect((await ready(created.id)).state).toBe("idle");

    const three = await boat.command(created.id, { command: "echo out; echo err >&2; exit 3" });
    expect(three).toEqual({ success: false, exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false });
    const chunks: string[] = [];
    const streamed = await boat.commandStream(created.id, { command: "echo a; sleep 0.2; echo b" }, (s, d) =>
      chunks.push(`${s}:${d}`),
    );
    expect(streamed.stdout).toBe("a\nb\n");
    expect(chunks.length).toBeGreaterThanOrEqual(2);

    await boat.writeFile(created.id, "/home/user/dir/bytes.bin", Buffer.from([0, 1, 2, 255]));
    expect([...(await boat.readFile(created.id, "/home/user/dir/bytes.bin"))]).toEqual([0, 1, 2, 255]);
    const outside = await boat.readFile(created.id, "/etc/passwd").catch((e: unknown) => e);
    expect((outside as BoatApiError).code).toBe("invalid_path");

    // A tiny web server inside the machine, reached only through the protected hosted port.
    await boat.command(created.id, {
      command:
        "mkdir -p /tmp/www && echo served > /tmp/www/index.html && (cd /tmp/www && nohup python3 -m http.server 8000 >/dev/null 2>&1 &) ; sleep 1",
    });
    const hosted = await boat.hostPort(created.id, 8000);
    expect(hosted.isProtected).toBe(true);
    expect(await (await fetch(hosted.url)).text()).toBe("served\n");
    const bare = new URL(hosted.url);
    bare.searchParams.delete("_token");
    expect((await fetch(bare)).status).toBe(401);

    await boat.stop(created.id);
    expect((await boat.get(created.id)).state).toBe("archiving");
    expect((await ready(created.id)).state).toBe("archived");
    const refused = await boat.command(created.id, { command: "true" }).catch((e: unknown) => e);
    expect((refused as BoatApiError).code).toBe("sandbox_not_ready");

    await boat.resume(created.id, { noEnv: true });
    expect((await ready(created.id)).state).toBe("idle");
    // Same id, disk kept, processes gone; the old port token no longer admits anyone.
    expect((await boat.readFile(created.id, "/home/user/dir/bytes.bin")).length).toBe(4);
    expect((await fetch(hosted.url)).status).toBe(401);
    const again = await boat.hostPort(created.id, 8000);
    expect(again.url).not.toBe(hosted.url);
    expect(new URL(again.url).origin).toBe(new URL(hosted.url).origin);

    await boat.deleteAndWait(created.id, { pollMs: 20 });
    const gone = await boat.get(created.id).catch((e: unknown) => e);
    expect((gone as BoatApiError).status).toBe(410);
    expect(((await boat.get("bx_22222222").catch((e: unknown) => e)) as BoatApiError).status).toBe(404);
    expect(
      emulator.requests.filter((r) => r.path.startsWith("/deletion-operations/")).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it("the TTL archives a sandbox when it lapses on the emulated clock; a PATCH restarts the count", async () => {
    const created = await boat.create({ noEnv: true, ttlSeconds: 7200 }, { idempotencyKey: randomUUID() });
    await ready(created.id);
    clock += 5_400_000; // 1.5 h: still within two hours
    expect(await emulator.sweep()).not.toContain(created.id);
    await boat.update(created.id, { ttlSeconds: 7200 }); // refreshed: two hours from now
    clock += 5_400_000; // 3 h after create, 1.5 h after the refresh
    expect(await emulator.sweep()).not.toContain(created.id);
    clock += 2_000_000; // past the refreshed deadline
    expect(await emulator.sweep()).toContain(created.id);
    expect((await boat.get(created.id)).state).toBe("archived");
    await boat.deleteAndWait(created.id, { pollMs: 20 });
  });

  it("a 409 race during archive is retried and a 429 waits the Retry-After", async () => {
    const created = await boat.create({ noEnv: true }, { idempotencyKey: randomUUID() });
    await ready(created.id);
    waits.length = 0;
    emulator.faults.conflict("stop", 2);
    await boat.stop(created.id);
    expect(waits).toEqual([1000, 2000]);
    waits.length = 0;
    emulator.faults.rateLimit(1, 3);
    expect((await ready(created.id)).state).toBe("archived");
    expect(waits).toEqual([3000]);
    await boat.deleteAndWait(created.id, { pollMs: 20 });
  });

  it("unrecoverable states: error and cancelled are terminal, an expired snapshot refuses resume with 410", async () => {
    const a = await boat.create({ noEnv: true }, { idempotencyKey: randomUUID() });
    const b = await boat.create({ noEnv: true }, { idempotencyKey: randomUUID() });
    const c = await boat.create({ noEnv: true }, { idempotencyKey: randomUUID() });
    await emulator.settled();
    await emulator.setState(a.id, "error", "host lost");
    expect((await boat.get(a.id)).state).toBe("error");
    const resumeError = await boat.resume(a.id, { noEnv: true }).catch((e: unknown) => e);
    expect((resumeError as BoatApiError).code).toBe("sandbox_not_resumable");
    await emulator.setState(b.id, "cancelled", "no machine");
    expect((await boat.get(b.id)).state).toBe("cancelled");
    expect(((await boat.get(b.id).catch((e: unknown) => e)) as BoatApiError).status).toBe(404);
    await boat.stop(c.id);
    await emulator.settled();
    emulator.expireSnapshot(c.id);
    const expired = await boat.resume(c.id, { noEnv: true }).catch((e: unknown) => e);
    expect((expired as BoatApiError).status).toBe(410);
    expect((expired as BoatApiError).code).toBe("snapshot_expired");
    for (const id of [a.id, c.id]) await boat.deleteAndWait(id, { pollMs: 20 });
  });
});
