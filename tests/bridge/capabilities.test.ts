// Retries and re-adoptions through the real bridge (a child process) in front of the real API on
// the fake provider: a destroy retried after it succeeded answers success again — with the
// destroyed capability only, never for one the bridge did not mint; one client's capabilities
// for one scope are bounded, the oldest evicted past the cap and answering like a revoked one
// while ownership of the computer's disposal survives; an oversized file write keeps the API's
// details.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type BridgeClient, useBridgeStack } from "./bridge-stack.ts";

const bridge = useBridgeStack("bridge-capabilities");
const { token, mcpSession } = bridge;
const stack = () => bridge.stack();

/** The bridge's cap on one client's capabilities for one scope (docs/external.md). */
const HOLDS_PER_SCOPE = 8;

const call = (tool: string, body: unknown, client: BridgeClient = "alpha") =>
  stack().bridge(tool, body, token(client));

async function adopt(conversationId: string, client: BridgeClient = "alpha") {
  const res = await call("computer_create", { scope: { conversationId } }, client);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return {
    computerId: res.json.result.computerId as string,
    capability: res.json.result.capability as string,
  };
}

const NOT_FOUND = { error: { code: "NOT_FOUND", message: "computer not found" } };

describe("a retried destroy answers success; a capability never minted still finds nothing", () => {
  it("over HTTP: the destroyed capabilities (the destroyer's and another hold's) answer destroyed: false", async () => {
    const first = await adopt("destroy-twice");
    const second = await adopt("destroy-twice");
    expect(second.computerId).toBe(first.computerId);

    const done = await call("computer_destroy", first);
    expect(done.status).toBe(200);
    expect(done.json.result).toMatchObject({ computerId: first.computerId, destroyed: true });
    for (const held of [first, second]) {
      const again = await call("computer_destroy", held);
      expect(again.status, JSON.stringify(again.json)).toBe(200);
      expect(again.json.result).toMatchObject({ computerId: first.computerId, destroyed: false });
    }
    expect((await bridge.liveComputers()).has(first.computerId)).toBe(false);

    // Only a destroy is answered: any other verb with a destroyed capability finds nothing.
    const exec = await call("computer_exec", { ...first, argv: ["true"] });
    expect(exec.status).toBe(404);
    expect(exec.json).toEqual(NOT_FOUND);
    // Never minted, for that computer or a made-up one; or minted for alpha, presented by beta.
    const forged = `rcap_${randomBytes(32).toString("base64url")}`;
    for (const [body, client] of [
      [{ computerId: first.computerId, capability: forged }, "alpha"],
      [{ computerId: "c_made_up", capability: forged }, "alpha"],
      [{ computerId: "c_made_up", capability: first.capability }, "alpha"],
      [first, "beta"],
    ] as const) {
      const res = await call("computer_destroy", body, client);
      expect(res.status, `${client} ${JSON.stringify(body)}`).toBe(404);
      expect(res.json).toEqual(NOT_FOUND);
    }
  });

  it("over MCP: destroying again (by id, or the current computer as first sent) answers destroyed: false", async () => {
    const session = await mcpSession("alpha", "destroy-twice-mcp");
    const made = await session.call("rakazo_computer_create");
    expect(await session.call("rakazo_computer_destroy")).toMatchObject({ destroyed: true });
    expect(await session.call("rakazo_computer_destroy")).toMatchObject({ destroyed: false });
    expect(await session.call("rakazo_computer_destroy", { computerId: made.computerId })).toMatchObject({
      destroyed: false,
    });
    const other = await session.raw("rakazo_computer_destroy", { computerId: "c_never_here" });
    expect(other.isError).toBe(true);
    expect(other.content[0]?.text).toMatch(/^NOT_FOUND: /);
    await session.end();
  });
});

describe("capabilities per (client, scope) are bounded", () => {
  it(`past ${HOLDS_PER_SCOPE} adoptions the oldest answers NOT_FOUND; the rest work, and the last holder still disposes`, async () => {
    const holds = [];
    for (let i = 0; i < HOLDS_PER_SCOPE + 4; i += 1) holds.push(await adopt("adopted-often"));
    const computerId = holds[0]?.computerId;
    expect(new Set(holds.map((h) => h.computerId))).toEqual(new Set([computerId]));

    const evicted = holds.slice(0, 4);
    const kept = holds.slice(4);
    for (const held of evicted) {
      const res = await call("computer_exec", { ...held, argv: ["true"] });
      expect(res.status).toBe(404);
      expect(res.json).toEqual(NOT_FOUND);
    }
    for (const held of kept) {
      expect((await call("computer_exec", { ...held, argv: ["true"] })).json.result.exitCode).toBe(0);
    }
    // Beta's adoptions of its own scope of that name neither count against alpha's nor evict them.
    for (let i = 0; i < HOLDS_PER_SCOPE + 1; i += 1) await adopt("adopted-often", "beta");
    const theirs = await adopt("adopted-often", "beta");
    expect((await call("computer_exec", { ...kept[0], argv: ["true"] })).status).toBe(200);
    expect((await call("computer_destroy", theirs, "beta")).status).toBe(200);

    // The evicted first hold owned the computer's disposal: it passed to the newest, so releasing
    // every remaining hold without keep ends the computer (none is left running ownerless).
    for (const [index, held] of kept.entries()) {
      const released = await call("computer_release", { ...held, keep: false });
      expect(released.status).toBe(200);
      expect(released.json.result.kept, `hold ${index}`).toBe(index < kept.length - 1);
    }
    expect((await bridge.liveComputers()).has(computerId as string)).toBe(false);
  });
});

describe("API refusals keep their details", () => {
  it("an oversized file write answers the API's code and details.issues", async () => {
    const held = await adopt("too-large-write");
    const res = await call("file", {
      ...held,
      op: "write",
      path: "big.txt",
      content: "x".repeat(1024 * 1024 + 1),
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("INVALID_INPUT");
    expect(res.json.error.details?.issues).toEqual(expect.any(Array));
    expect(res.json.error.details.issues.length).toBeGreaterThan(0);
    expect((await call("computer_destroy", held)).status).toBe(200);
  });
});
