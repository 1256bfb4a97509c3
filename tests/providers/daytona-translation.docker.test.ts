/**
 * Daytona translation tests (PRV-1, SCR-4) with the real SDK against the emulator:
 * a command exiting non-zero is a result; the preview token of the screen gateway travels only
 * in a header of the server-side target — never in its URL, an error text, or a log line.
 */

import { createMachinePool, type DaytonaEmulator, startDaytonaEmulator } from "@rakazo/emulators";
import { createLogger } from "@rakazo/log";
import { assertNoSecretLogged, registerLogSecret, startLogSecretScan } from "@rakazo/log/testing";
import { createDaytonaProvider, PREVIEW_TOKEN_HEADER } from "@rakazo/sandbox/daytona";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { supervisorBundle } from "./remote-fixture.ts";

const gate = await requireDocker("Daytona adapter translation on the Daytona emulator");

describe.skipIf(gate.skip)(gate.title, () => {
  const machines = createMachinePool({
    image: COMPUTER_IMAGE,
    emulator: "daytona",
    owner: "i15-daytona-translation",
  });
  let emulator: DaytonaEmulator;
  let provider: ReturnType<typeof createDaytonaProvider>;
  const refs: string[] = [];

  beforeAll(async () => {
    emulator = await startDaytonaEmulator({ machines, apiKey: "dtn_translation_key" });
    const bytes = await supervisorBundle();
    provider = createDaytonaProvider({
      apiKey: "dtn_translation_key",
      apiUrl: emulator.apiUrl,
      supervisorBundle: async () => bytes,
    });
  });
  afterAll(async () => {
    for (const ref of refs) await provider.destroy(ref).catch(() => undefined);
    await emulator?.close();
    await machines.removeAll();
  }, 120_000);

  it("a command exiting non-zero is a result with its exit code and split streams", async () => {
    const { ref } = await provider.provision({
      computerId: "cmp_dtn_exit",
      mode: "team",
      homeKey: "cmp_dtn_exit",
    });
    refs.push(ref);
    const result = await provider.sandbox(ref).exec({ argv: ["sh", "-c", "echo out; echo err >&2; exit 3"] });
    expect(result).toEqual({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false });
  });

  it("the preview token is only a header of the server-side target: never in its URL, an error or a log line", async () => {
    startLogSecretScan();
    const log = createLogger({ base: { service: "i15-daytona-scan" }, write: () => undefined });
    const { ref } = await provider.provision({
      computerId: "cmp_dtn_scan",
      mode: "team",
      homeKey: "cmp_dtn_scan",
    });
    refs.push(ref);
    const sandbox = provider.sandbox(ref);
    const screens = sandbox.screens;
    if (!screens) throw new Error("the Daytona adapter wires screens");
    const target = await screens.target();
    expect(target.transport).toBe("http");
    if (target.transport !== "http") return;
    const token = target.headers?.[PREVIEW_TOKEN_HEADER] ?? "";
    expect(token.length).toBeGreaterThan(12);
    registerLogSecret(token, "daytona preview token");
    expect(target.url).not.toContain(token);
    // The gateway answers through the preview link only with the header: without it the
    // preview proxy refuses; with it the request reaches the gateway, which (given no screen
    // ticket) answers with its own refusal reason.
    const bare = await fetch(`${target.url}/v1/screen`);
    expect(bare.status).toBe(401);
    expect(await bare.text()).not.toContain("missing_ticket");
    const viaPreview = await fetch(`${target.url}/v1/screen`, { headers: { ...target.headers } });
    expect(await viaPreview.json()).toEqual({ ok: false, reason: "missing_ticket" });
    // What the system logs about screens and failures: the target, an error after a stop.
    log.info("screen.target", { "screen.target": target });
    await provider.stop(ref);
    const error = await screens.target().catch((e: unknown) => e);
    expect(String(error)).not.toContain(token);
    log.warn("screen.target_failed", { err: error });
    expect(emulator.requests.some((r) => r.path.includes(token))).toBe(false);
    assertNoSecretLogged();
  });
});
