/**
 * The guards every emulator shares, without Docker (no route below reaches a machine): the
 * service's key check, and the refusal of a call no route plays — each in its own service's
 * error shape and with the status the real service uses for an unknown route.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BoatEmulator, startBoatEmulator } from "./boat/emulator.ts";
import { type DaytonaEmulator, startDaytonaEmulator } from "./daytona/emulator.ts";
import { type E2BEmulator, startE2BEmulator } from "./e2b/emulator.ts";
import { createMachinePool } from "./machines.ts";

const KEY = "emu_test_key";
let e2b: E2BEmulator;
let daytona: DaytonaEmulator;
let boat: BoatEmulator;

beforeAll(async () => {
  const machines = createMachinePool({
    image: "unused",
    emulator: "refusals",
    owner: `refusals-${process.pid}`,
  });
  e2b = await startE2BEmulator({ image: "unused", apiKey: KEY });
  daytona = await startDaytonaEmulator({ machines, apiKey: KEY });
  boat = await startBoatEmulator({ machines, apiKey: KEY });
});

afterAll(async () => {
  await Promise.all([e2b?.close(), daytona?.close(), boat?.close()]);
});

async function call(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("emulator refusals", () => {
  it("E2B: a wrong X-API-KEY is 401, an unplayed call 404 {code, message} naming it", async () => {
    expect(await call(`${e2b.url}/sandboxes`, { headers: { "x-api-key": "wrong" } })).toEqual({
      status: 401,
      body: { code: 401, message: "Invalid API key" },
    });
    expect(await call(`${e2b.url}/v2/templates`, { method: "POST", headers: { "x-api-key": KEY } })).toEqual({
      status: 404,
      body: { code: 404, message: "POST /v2/templates is not emulated" },
    });
    // A known path with another method is not played either.
    expect(
      (await call(`${e2b.url}/sandboxes/x`, { method: "PATCH", headers: { "x-api-key": KEY } })).status,
    ).toBe(404);
  });

  it("Daytona: no bearer is 401, an unplayed call 404 {statusCode, message, error}", async () => {
    expect(await call(`${daytona.apiUrl}/sandbox`, { headers: { authorization: "Bearer wrong" } })).toEqual({
      status: 401,
      body: { statusCode: 401, message: "Unauthorized", error: "Unauthorized" },
    });
    const auth = { authorization: `Bearer ${KEY}` };
    expect(await call(`${daytona.apiUrl}/snapshots`, { headers: auth })).toEqual({
      status: 404,
      body: { statusCode: 404, message: "GET /api/snapshots is not emulated", error: "Not Found" },
    });
    expect((await call(`${daytona.apiUrl}/sandbox/nope`, { headers: auth })).body).toMatchObject({
      statusCode: 404,
      code: "NOT_FOUND",
    });
    expect(
      (
        await call(`${daytona.apiUrl.replace(/\/api$/, "")}/toolbox/nope/process/execute`, {
          method: "POST",
          headers: auth,
        })
      ).body,
    ).toMatchObject({ statusCode: 404, message: "sandbox not found" });
  });

  it("Boat: no bearer is 401, an unplayed call 404 in the error envelope; unknown ids 404", async () => {
    expect((await call(`${boat.url}/sandboxes`)).body).toMatchObject({
      ok: false,
      status: 401,
      code: "unauthorized",
    });
    const auth = { authorization: `Bearer ${KEY}` };
    expect((await call(`${boat.url}/sandboxes/bx_1/snapshots`, { headers: auth })).body).toMatchObject({
      ok: false,
      type: "sandbox.error",
      status: 404,
      code: "not_found",
      message: "GET /sandboxes/bx_1/snapshots is not emulated",
    });
    expect((await call(`${boat.url}/sandboxes/bx_1`, { headers: auth })).body).toMatchObject({
      status: 404,
      code: "sandbox_not_found",
    });
  });
});
