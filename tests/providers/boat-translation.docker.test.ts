/**
 * Boat translation tests (PRV-3, SCR-4): what the adapter makes of Boat's lifecycle,
 * against the emulator with real machines. Resume rotates the hosted-port token and the adapter
 * never hands out the stale one; each unrecoverable state is reported missing and the computer
 * comes back on a replacement with the last checkpoint restored (files and modes in every state,
 * a browser cookie in one); the TTL is refreshed by activity and lapses while idle (emulated
 * clock).
 */
import { Readable } from "node:stream";
import { type BoatEmulator, createMachinePool, startBoatEmulator } from "@rakazo/emulators";
import { createBoatProvider } from "@rakazo/sandbox/boat";
import { COMPUTER_IMAGE, readAll, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserCookieFixture } from "../support/browser-cookie.ts";
import { supervisorBundle } from "./remote-fixture.ts";

const gate = await requireDocker("Boat adapter translation on the Boat emulator");

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({
    image: COMPUTER_IMAGE,
    emulator: "boat",
    owner: "i15-boat-translation",
  });
  let clock = Date.parse("2026-12-01T12:00:00Z");
  let emulator: BoatEmulator;
  let provider: ReturnType<typeof createBoatProvider>;
  const refs: string[] = [];

  beforeAll(async () => {
    emulator = await startBoatEmulator({ machines, apiKey: "boat_translation_key", now: () => clock });
    const bytes = await supervisorBundle();
    provider = createBoatProvider({
      apiKey: "boat_translation_key",
      apiUrl: emulator.url,
      supervisorBundle: async () => bytes,
      now: () => clock,
      ttlRefreshMs: 10 * 60_000,
    });
  });
  afterAll(async () => {
    for (const ref of refs) await provider.destroy(ref).catch(() => undefined);
    await emulator?.close();
    await machines.removeAll();
  }, 120_000);

  const provision = async (computerId: string, ref?: string) => {
    const result = await provider.provision({
      computerId,
      mode: "team",
      homeKey: computerId,
      ...(ref ? { ref } : {}),
    });
    refs.push(result.ref);
    return result;
  };

  it("resume rotates the hosted-port token; the adapter hands out the fresh one and the stale one is refused", async () => {
    const { ref } = await provision("cmp_boat_rotate");
    const screens = provider.sandbox(ref).screens;
    if (!screens) throw new Error("the Boat adapter wires screens");
    const before = await screens.target();
    expect(before.transport).toBe("http");
    const staleUrl = before.transport === "http" ? before.url : "";
    expect(new URL(staleUrl).searchParams.get("_token")).toBeTruthy();
    await provider.stop(ref);
    expect(await provider.status(ref)).toBe("stopped");
    const again = await provision("cmp_boat_rotate", ref);
    expect(again).toEqual({ ref, replaced: false });
    const after = await screens.target();
    const freshUrl = after.transport === "http" ? after.url : "";
    expect(new URL(freshUrl).origin).toBe(new URL(staleUrl).origin);
    expect(new URL(freshUrl).searchParams.get("_token")).not.toBe(
      new URL(staleUrl).searchParams.get("_token"),
    );
    // The stale token is refused by Boat's port hosting itself (the gateway is never reached).
    const stale = await fetch(new URL("/v1/screen", staleUrl).href + new URL(staleUrl).search);
    expect(stale.status).toBe(401);
    expect(await stale.text()).toBe("refused\n");
  });

  it("each unrecoverable state is reported missing; the replacement gets the last checkpoint (files, modes, a browser cookie)", async () => {
    const states = ["error", "cancelled", "snapshot expired", "deleted"] as const;
    // The cookie is checked in the first state only: it starts a page browser on both machines
    // (~20 s of CI each time), and the restore path after the state is reported missing is the
    // same for all four — what differs per state is how "gone" is detected, checked for each.
    const cookie = browserCookieFixture();
    const bot = "bot_boat_restore";
    for (const state of states) {
      const computerId = `cmp_boat_gone_${state.replace(" ", "_")}`;
      const { ref } = await provision(computerId);
      const sandbox = provider.sandbox(ref);
      await sandbox.files.write("notes/kept.txt", `checkpoint of ${state}`);
      await sandbox.files.write("bin/run.sh", "#!/bin/sh\necho ran\n");
      expect((await sandbox.exec({ argv: ["chmod", "0750", "bin/run.sh"] })).exitCode).toBe(0);
      if (state === "error") {
        await cookie.plant(sandbox, bot);
        // PER-7: the browser is closed (profile flushed) before the export.
        await sandbox.desktop?.release(bot);
      }
      const checkpoint = await readAll(await sandbox.files.exportWorkspace());

      if (state === "error") await emulator.setState(ref, "error", "host lost");
      if (state === "cancelled") await emulator.setState(ref, "cancelled", "no machine");
      if (state === "snapshot expired") {
        await provider.stop(ref);
        await emulator.settled();
        emulator.expireSnapshot(ref);
      }
      if (state === "deleted") await emulator.vanish(ref);

      expect(await provider.status(ref), state).toBe("missing");
      const next = await provision(computerId, ref);
      expect(next.replaced, state).toBe(true);
      expect(next.ref).not.toBe(ref);
      const replacement = provider.sandbox(next.ref);
      await replacement.files.importWorkspace(Readable.from(checkpoint));
      expect(Buffer.from(await replacement.files.read("notes/kept.txt")).toString()).toBe(
        `checkpoint of ${state}`,
      );
      const mode = await replacement.exec({ argv: ["stat", "-c", "%a", "bin/run.sh"] });
      expect(mode.stdout.trim(), state).toBe("750");
      expect((await replacement.exec({ argv: ["./bin/run.sh"] })).stdout).toBe("ran\n");
      if (state === "error") expect(await cookie.read(replacement, bot)).toBe(cookie.cookie);
    }
  }, 900_000);

  it("the two-hour TTL is refreshed while the computer is active and lapses while it idles", async () => {
    const { ref } = await provision("cmp_boat_ttl");
    const sandbox = provider.sandbox(ref);
    // Active: a command every 30 emulated minutes for three hours keeps it up.
    for (let i = 0; i < 6; i += 1) {
      clock += 30 * 60_000;
      expect((await sandbox.exec({ argv: ["true"] })).exitCode).toBe(0);
      expect(await emulator.sweep()).not.toContain(ref);
    }
    expect(
      emulator.requests.filter((r) => r.method === "PATCH" && r.path === `/sandboxes/${ref}`).length,
    ).toBeGreaterThanOrEqual(6);
    // Idle: no calls; past two hours Boat archives it.
    clock += 119 * 60_000;
    expect(await emulator.sweep()).not.toContain(ref);
    clock += 2 * 60_000;
    expect(await emulator.sweep()).toContain(ref);
    expect(await provider.status(ref)).toBe("stopped");
    // The next provision resumes the same machine.
    expect(await provision("cmp_boat_ttl", ref)).toEqual({ ref, replaced: false });
  });
});
