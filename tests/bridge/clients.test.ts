// The bridge is multi-tenant by credential: two harnesses (clients alpha and beta), each with a
// bridge token of its own, through the real bridge (a child process) in front of the real API on
// the fake provider. Beta naming alpha's conversation — over /v1 or over MCP with the
// conversation header — lists nothing of alpha's, adopts nothing, and cannot exec in, read from,
// release or destroy alpha's computer even with its id and capability; closing beta's MCP
// session leaves alpha's computer running. Within one client, a session that adopted a computer
// another live session holds does not destroy it on close; a restarted bridge lets alpha adopt
// its own computer again from the scope alone.
import { describe, expect, it } from "vitest";
import { eventually } from "../support/system.ts";
import { type BridgeClient, useBridgeStack } from "./bridge-stack.ts";

const bridge = useBridgeStack("bridge-clients");
const { token, mcpSession } = bridge;
const stack = () => bridge.stack();
const live = () => bridge.liveComputers();

async function ok(client: BridgeClient, tool: string, body: unknown) {
  const res = await stack().bridge(tool, body, token(client));
  expect(res.status, `${client} ${tool}: ${JSON.stringify(res.json)}`).toBe(200);
  return res.json.result;
}

/** A tools/list on MCP session `sessionId` with `bearer`, by hand: status and body. */
async function probeSession(bearer: string, sessionId: string) {
  const res = await bridge.postMcp(
    bearer,
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    sessionId,
  );
  return { status: res.status, body: await res.text() };
}

describe("bridge clients: one harness never reaches another's computers", () => {
  it("over HTTP: beta names alpha's conversation and gets nothing of alpha's", async () => {
    const scope = { conversationId: "shared-name-http" };
    const mine = await ok("alpha", "computer_create", { scope });
    expect(mine).toMatchObject({ created: true, key: "client:alpha/conversation:shared-name-http" });
    const held = { computerId: mine.computerId, capability: mine.capability };
    await ok("alpha", "file", { ...held, op: "write", path: "secret.txt", content: "alpha only" });

    // Listing and adopting by alpha's scope find only beta's own namespace.
    expect(await ok("beta", "computers", { scope })).toEqual([]);
    expect(
      (await ok("alpha", "computers", { scope })).map((c: { computerId: string }) => c.computerId),
    ).toEqual([mine.computerId]);
    const theirs = await ok("beta", "computer_create", { scope });
    expect(theirs).toMatchObject({ created: true, key: "client:beta/conversation:shared-name-http" });
    expect(theirs.computerId).not.toBe(mine.computerId);
    const peek = await ok("beta", "computer_exec", {
      computerId: theirs.computerId,
      capability: theirs.capability,
      argv: ["cat", "secret.txt"],
    });
    expect(peek.exitCode).not.toBe(0);

    // Alpha's id with alpha's capability, presented by beta (or by the default client): exactly
    // like a missing computer, for every verb.
    for (const bearer of [token("beta"), stack().bridgeToken]) {
      for (const [tool, body] of [
        ["computer_exec", { ...held, argv: ["cat", "secret.txt"] }],
        ["file", { ...held, op: "read", path: "secret.txt" }],
        ["computers", held],
        ["computer_release", { ...held, keep: false }],
        ["computer_destroy", held],
      ] as const) {
        const res = await stack().bridge(tool, body, bearer);
        expect(res.status, tool).toBe(404);
        expect(res.json).toEqual({ error: { code: "NOT_FOUND", message: "computer not found" } });
      }
    }

    // Alpha's computer is untouched and still its own.
    expect((await live()).get(mine.computerId)).toEqual({
      key: "client:alpha/conversation:shared-name-http",
      state: "running",
    });
    expect((await ok("alpha", "file", { ...held, op: "read", path: "secret.txt" })).content).toBe(
      "alpha only",
    );
    await ok("beta", "computer_destroy", { computerId: theirs.computerId, capability: theirs.capability });
    await ok("alpha", "computer_destroy", held);
    expect(await live()).toEqual(new Map());
  });

  it("over MCP: beta's session for alpha's conversation is its own; closing it leaves alpha's computer", async () => {
    const conversation = "shared-name-mcp";
    const alpha = await mcpSession("alpha", conversation);
    const mine = await alpha.call("rakazo_computer_create");
    expect(mine).toMatchObject({ created: true, key: `client:alpha/conversation:${conversation}` });
    await alpha.call("rakazo_file", { op: "write", path: "secret.txt", content: "alpha only" });

    const beta = await mcpSession("beta", conversation);
    const theirs = await beta.call("rakazo_computer_create");
    expect(theirs).toMatchObject({ created: true, key: `client:beta/conversation:${conversation}` });
    expect(theirs.computerId).not.toBe(mine.computerId);
    // Naming alpha's computer id in beta's session: not one of the session's computers.
    const named = await beta.raw("rakazo_computer_exec", { computerId: mine.computerId, argv: ["true"] });
    expect(named.isError).toBe(true);
    expect((await beta.call("rakazo_computer_exec", { argv: ["cat", "secret.txt"] })).exitCode).not.toBe(0);

    // Beta's token with alpha's session id answers exactly like an unknown session id.
    const foreign = await probeSession(token("beta"), alpha.sessionId);
    const unknown = await probeSession(token("beta"), "00000000-0000-4000-8000-000000000000");
    expect(foreign.status).toBe(404);
    expect(foreign).toEqual(unknown);
    expect((await probeSession(token("alpha"), alpha.sessionId)).status).toBe(200);

    await beta.end();
    const after = await live();
    expect(after.has(theirs.computerId)).toBe(false);
    expect(after.get(mine.computerId)?.state).toBe("running");
    expect((await alpha.call("rakazo_file", { op: "read", path: "secret.txt" })).content).toBe("alpha only");

    await alpha.end();
    expect(await live()).toEqual(new Map());
  });

  it("within one client, closing a session that adopted a held computer leaves it; the last holder disposes", async () => {
    const conversation = "adopted-within-alpha";
    const first = await mcpSession("alpha", conversation);
    const made = await first.call("rakazo_computer_create");
    expect(made.created).toBe(true);

    // A second session of the same client adopts it (a restarted harness whose old session is
    // still open): closing it does not destroy what the first still holds.
    const second = await mcpSession("alpha", conversation);
    const adopted = await second.call("rakazo_computer_create");
    expect(adopted).toMatchObject({ created: false, computerId: made.computerId });
    await second.end();
    expect((await live()).get(made.computerId)?.state).toBe("running");
    expect((await first.call("rakazo_computer_exec", { argv: ["echo", "still here"] })).stdout).toBe(
      "still here\n",
    );

    // The other order: the owner ends first while the adopter holds it; the adopter, now the
    // last holder, disposes of it when it ends.
    const third = await mcpSession("alpha", conversation);
    expect((await third.call("rakazo_computer_create")).computerId).toBe(made.computerId);
    await first.end();
    expect((await live()).get(made.computerId)?.state).toBe("running");
    await third.end();
    expect((await live()).has(made.computerId)).toBe(false);
  });

  it("a restarted bridge lets alpha adopt its own computer again by scope; beta still gets its own", async () => {
    const scope = { conversationId: "survives-restart" };
    const mine = await ok("alpha", "computer_create", { scope });
    await ok("alpha", "file", {
      computerId: mine.computerId,
      capability: mine.capability,
      op: "write",
      path: "kept.txt",
      content: "from before the restart",
    });

    await stack().restartBridge();
    const stale = await stack().bridge(
      "computer_exec",
      { computerId: mine.computerId, capability: mine.capability, argv: ["true"] },
      token("alpha"),
    );
    expect(stale.status).toBe(404);

    // Over MCP: the new bridge has no hold on it, so the adopting session owns its disposal.
    const session = await mcpSession("alpha", scope.conversationId);
    const again = await session.call("rakazo_computer_create");
    expect(again).toMatchObject({ created: false, computerId: mine.computerId });
    // Adopting it twice in one session is still one hold: the session's close disposes of it.
    expect((await session.call("rakazo_computer_create")).computerId).toBe(mine.computerId);
    expect((await session.call("rakazo_file", { op: "read", path: "kept.txt" })).content).toBe(
      "from before the restart",
    );
    const theirs = await ok("beta", "computer_create", { scope });
    expect(theirs.computerId).not.toBe(mine.computerId);
    await session.end();
    expect((await live()).has(mine.computerId)).toBe(false);
    await ok("beta", "computer_destroy", { computerId: theirs.computerId, capability: theirs.capability });
    const left = await eventually(async () => {
      const found = await stack().leftovers();
      return found.liveComputers.length + found.keys.length === 0 ? found : undefined;
    });
    expect(left).toEqual({ containers: [], liveComputers: [], keys: [] });
  });
});
