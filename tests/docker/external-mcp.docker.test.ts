// MCP (EXT-4): the MCP SDK's own client lists the bridge's tools and runs exec, file,
// observe and browser through them, over stdio (the bridge's stdio server as a child process,
// holding only BRIDGE_TOKEN) and over streamable HTTP (the bridge's /mcp). Ending a session
// destroys its computers; nothing is left.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExternalStack, pageServerCommand, startExternalStack } from "../support/external.ts";
import { eventually } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

const gate = await requireDocker("the bridge's MCP server on Docker computers");
const TOOLS = [
  "bash",
  "edit",
  "rakazo_computer_browser",
  "rakazo_computer_create",
  "rakazo_computer_destroy",
  "rakazo_computer_exec",
  "rakazo_computer_observe",
  "rakazo_computers",
  "rakazo_file",
  "rakazo_process",
  "read",
  "write",
];

type CallResult = {
  content: { type: string; text?: string; data?: string; mimeType?: string }[];
  isError?: boolean;
};

async function exercise(client: Client): Promise<void> {
  const listed = await client.listTools();
  expect(listed.tools.map((t) => t.name).sort()).toEqual(TOOLS);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as CallResult;
    expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
    return result;
  };
  const json = (r: CallResult) => JSON.parse(r.content[0]?.text ?? "null");

  const made = json(await call("rakazo_computer_create"));
  expect(made).toMatchObject({ state: "running" });
  expect(made.capability).toBeUndefined();
  expect(json(await call("rakazo_computer_exec", { argv: ["echo", "via mcp"] })).stdout).toBe("via mcp\n");
  await call("rakazo_file", { op: "write", path: "mcp.txt", content: "through the protocol" });
  expect(json(await call("rakazo_file", { op: "read", path: "mcp.txt" })).content).toBe(
    "through the protocol",
  );
  expect((await call("read", { path: "mcp.txt" })).content[0]?.text).toBe("through the protocol");
  expect(json(await call("bash", { command: "wc -c < mcp.txt" })).stdout.trim()).toBe("20");
  const shot = await call("rakazo_computer_observe");
  expect(shot.content[0]).toMatchObject({ type: "image", mimeType: "image/png" });
  expect(
    Buffer.from(shot.content[0]?.data ?? "", "base64")
      .subarray(0, 4)
      .toString("hex"),
  ).toBe("89504e47");
  await call("bash", { command: pageServerCommand(8766) });
  const nav = json(
    await call("rakazo_computer_browser", { action: "navigate", url: "http://127.0.0.1:8766/" }),
  );
  expect(nav.title).toBe("none");
  const snap = json(await call("rakazo_computer_browser", { action: "snapshot" }));
  expect(snap.text).toContain("hello external");
  // A tool refusal is a tool error, not a protocol failure.
  const bad = (await client.callTool({
    name: "rakazo_file",
    arguments: { op: "read", path: "../x" },
  })) as CallResult;
  expect(bad.isError).toBe(true);
}

describe.skipIf(gate.skip)(gate.title, () => {
  let stack: ExternalStack;

  beforeAll(async () => {
    stack = await startExternalStack();
  }, 120_000);

  afterAll(async () => {
    if (!stack) return;
    await stack.destroyAll();
    await stack.close();
  }, 180_000);

  const nothingLeft = () =>
    eventually(async () => {
      const left = await stack.leftovers();
      return left.containers.length + left.liveComputers.length + left.keys.length === 0 ? left : undefined;
    }, 120_000);

  it("over stdio: tools listed and run; closing the session destroys its computer", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dirname, "../../apps/bridge/src/stdio.ts")],
      env: {
        PATH: process.env.PATH ?? "",
        BRIDGE_URL: stack.bridgeUrl(),
        BRIDGE_TOKEN: stack.bridgeToken,
        BRIDGE_CONVERSATION_ID: `i19-mcp-stdio-${process.pid}`,
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "i19-test", version: "1.0.0" });
    await client.connect(transport);
    await exercise(client);
    await client.close();
    expect(await nothingLeft()).toEqual({ containers: [], liveComputers: [], keys: [] });
  }, 300_000);

  it("over streamable HTTP: tools listed and run; ending the session destroys its computer", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.bridgeUrl()}/mcp`), {
      requestInit: {
        headers: {
          authorization: `Bearer ${stack.bridgeToken}`,
          "x-rakazo-conversation": `i19-mcp-http-${process.pid}`,
        },
      },
    });
    const client = new Client({ name: "i19-test", version: "1.0.0" });
    await client.connect(transport);
    await exercise(client);
    await transport.terminateSession();
    await client.close();
    expect(await nothingLeft()).toEqual({ containers: [], liveComputers: [], keys: [] });

    // Without BRIDGE_TOKEN there is no MCP session at all.
    const res = await fetch(`${stack.bridgeUrl()}/mcp`, { method: "POST", body: "{}" });
    expect(res.status).toBe(401);
  }, 300_000);
});
