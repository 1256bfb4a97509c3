/**
 * The guards every emulator shares, without Docker (no route below reaches a machine): the
 * service's key check, and the refusal of a call no route plays — each in its own service's
 * error shape, always 501 naming the call (a 404 reads as "sandbox not found" to the SDKs, so an
 * unplayed call on a sandbox that exists must not answer it).
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
  it("E2B: a wrong X-API-KEY is 401, an unplayed call 501 {code, message} naming it", async () => {
    expect(await call(`${e2b.url}/sandboxes`, { headers: { "x-api-key": "wrong" } })).toEqual({
      status: 401,
      body: { code: 401, message: "Invalid API key" },
    });
    expect(await call(`${e2b.url}/v2/templates`, { method: "POST", headers: { "x-api-key": KEY } })).toEqual({
      status: 501,
      body: { code: 501, message: "POST /v2/templates is not emulated" },
    });
    // A known path with another method is not played either.
    expect(
      (await call(`${e2b.url}/sandboxes/x`, { method: "PATCH", headers: { "x-api-key": KEY } })).status,
    ).toBe(501);
    // The SDK calls the adapters do not make: refused by name, never "sandbox not found".
    for (const [method, path] of [
      ["GET", "/sandboxes/i1/metrics"],
      ["POST", "/sandboxes/i1/fork"],
      ["PUT", "/sandboxes/i1/network"],
      ["POST", "/sandboxes/i1/snapshots"],
      ["GET", "/snapshots"],
    ] as const) {
      expect(await call(`${e2b.url}${path}`, { method, headers: { "x-api-key": KEY } })).toEqual({
        status: 501,
        body: { code: 501, message: `${method} ${path} is not emulated` },
      });
    }
    // The one SDK call on a missing sandbox that is emulated still answers 404 with code 404.
    expect(await call(`${e2b.url}/sandboxes/nope`, { headers: { "x-api-key": KEY } })).toEqual({
      status: 404,
      body: { code: 404, message: 'sandbox "nope" not found' },
    });
  });

  it("E2B: internet access and outbound rules are refused at create, before any machine", async () => {
    const create = (body: unknown) =>
      call(`${e2b.url}/v2/sandboxes`, {
        method: "POST",
        headers: { "x-api-key": KEY, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect(await create({ templateID: "desktop", allow_internet_access: true })).toEqual({
      status: 400,
      body: {
        code: 400,
        message:
          "allow_internet_access: true is not emulated: emulated sandboxes have no network (send false)",
      },
    });
    expect(await create({ templateID: "desktop", network: { allowOut: ["example.com"] } })).toEqual({
      status: 400,
      body: { code: 400, message: "network.allowOut is not emulated: emulated sandboxes have no network" },
    });
    expect(e2b.sandboxes()).toEqual([]);
  });

  it("Daytona: no bearer is 401, an unplayed call 501 {statusCode, message, error, code}", async () => {
    expect(await call(`${daytona.apiUrl}/sandbox`, { headers: { authorization: "Bearer wrong" } })).toEqual({
      status: 401,
      body: { statusCode: 401, message: "Unauthorized", error: "Unauthorized" },
    });
    const auth = { authorization: `Bearer ${KEY}` };
    expect(await call(`${daytona.apiUrl}/snapshots`, { headers: auth })).toEqual({
      status: 501,
      body: {
        statusCode: 501,
        message: "GET /api/snapshots is not emulated",
        error: "Not Implemented",
        code: "NOT_EMULATED",
      },
    });
    // The SDK's other sandbox calls (fork, snapshot, resize, recover, archive, SSH, signing key):
    // not emulated, refused by name.
    for (const [method, path] of [
      ["POST", "/sandbox/s1/fork"],
      ["POST", "/sandbox/s1/snapshot"],
      ["POST", "/sandbox/s1/resize"],
      ["POST", "/sandbox/s1/recover"],
      ["POST", "/sandbox/s1/archive"],
      ["GET", "/sandbox/s1/signing-key"],
      ["GET", "/config"],
    ] as const) {
      expect((await call(`${daytona.apiUrl}${path}`, { method, headers: auth })).body).toMatchObject({
        statusCode: 501,
        message: `${method} /api${path} is not emulated`,
      });
    }
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

  it("Boat: no bearer is 401, an unplayed call 501 in the error envelope; unknown ids 404", async () => {
    expect((await call(`${boat.url}/sandboxes`)).body).toMatchObject({
      ok: false,
      status: 401,
      code: "unauthorized",
    });
    const auth = { authorization: `Bearer ${KEY}` };
    expect((await call(`${boat.url}/sandboxes/bx_1/snapshots`, { headers: auth })).body).toMatchObject({
      ok: false,
      type: "sandbox.error",
      status: 501,
      code: "not_emulated",
      message: "GET /sandboxes/bx_1/snapshots is not emulated",
    });
    expect((await call(`${boat.url}/sandboxes/bx_1`, { headers: auth })).body).toMatchObject({
      status: 404,
      code: "sandbox_not_found",
    });
  });
});
