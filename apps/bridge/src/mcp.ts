/**
 * The bridge's tools as an MCP server (EXT-4), for any MCP-capable harness: the seven
 * `rakazo_*` tools plus `bash`, `read`, `write`, `edit` routed into the computer. One server per
 * harness session; the session holds the capabilities in its memory, so the model never sees
 * one and a tool names a computer by id (or uses the session's current computer). Closing the
 * session releases its computers: destroyed unless created with `keep: true`, adopted while
 * another session held them, or still held by another (computers.ts says who disposes).
 *
 * The same server runs over stdio (stdio.ts: a child of the harness, speaking to the bridge
 * over HTTP with BRIDGE_TOKEN) and over streamable HTTP at the bridge's `/mcp` (server.ts).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { BridgeError } from "./errors.ts";
import type { ToolName } from "./tools.ts";

/** Runs one bridge tool: in-process at the bridge, or over HTTP from the stdio server. */
export type ToolCaller = (name: ToolName, body: Record<string, unknown>) => Promise<unknown>;

export interface SessionDefaults {
  readonly conversationId: string;
  readonly teamRoot?: string | undefined;
}

interface Holding {
  readonly capability: string;
  readonly keep: boolean;
}

type ToolResult = {
  content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[];
  isError?: boolean;
};

const text = (value: unknown): ToolResult => ({
  content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }],
});

/** One harness session's MCP server and what it holds. */
export function createMcpSession(call: ToolCaller, defaults: SessionDefaults) {
  const held = new Map<string, Holding>();
  let current: string | undefined;

  const target = (computerId?: string) => {
    const id = computerId ?? current;
    const holding = id === undefined ? undefined : held.get(id);
    if (id === undefined || !holding) {
      throw new BridgeError(
        "NOT_FOUND",
        "no such computer in this session; call rakazo_computer_create first",
      );
    }
    return { computerId: id, capability: holding.capability };
  };

  const guarded =
    <A>(work: (args: A) => Promise<ToolResult>) =>
    async (args: A): Promise<ToolResult> => {
      try {
        return await work(args);
      } catch (error) {
        const code = error instanceof BridgeError ? error.code : "INTERNAL";
        return { content: [{ type: "text", text: `${code}: ${(error as Error).message}` }], isError: true };
      }
    };

  const server = new McpServer({ name: "rakazo-bridge", version: "0.1.0" });
  const computerId = z
    .string()
    .optional()
    .describe("A computer of this session; default: the last one created");

  server.registerTool(
    "rakazo_computer_create",
    {
      description:
        "Create or re-adopt this conversation's computer (a Linux desktop with a browser). share: the Team's computer with a screen of your own; account: one long-lived computer for every conversation naming it. keep: leave it running when the session ends.",
      inputSchema: {
        share: z.boolean().optional(),
        account: z.string().min(1).max(160).optional(),
        keep: z.boolean().optional(),
      },
    },
    guarded(async (args) => {
      const scope = {
        conversationId: defaults.conversationId,
        ...(defaults.teamRoot !== undefined ? { teamRoot: defaults.teamRoot } : {}),
        ...(args.share !== undefined ? { share: args.share } : {}),
        ...(args.account !== undefined ? { account: args.account } : {}),
      };
      const made = (await call("computer_create", { scope })) as { computerId: string; capability: string };
      const already = held.get(made.computerId);
      if (already) {
        // Adopted again by this session: the first capability is the hold that may own the
        // computer's disposal, and a second would count as another holder at this session's close.
        await call("computer_release", {
          computerId: made.computerId,
          capability: made.capability,
          keep: true,
        });
      }
      held.set(made.computerId, {
        capability: already?.capability ?? made.capability,
        keep: args.keep ?? already?.keep ?? false,
      });
      current = made.computerId;
      const { capability: _, ...shown } = made as Record<string, unknown>;
      return text(shown);
    }),
  );

  server.registerTool(
    "rakazo_computers",
    {
      description: "List this session's computers, or report one's state and screens with computerId.",
      inputSchema: { computerId },
    },
    guarded(async (args) => {
      if (args.computerId === undefined) {
        return text(
          [...held.entries()].map(([id, h]) => ({ computerId: id, keep: h.keep, current: id === current })),
        );
      }
      return text(await call("computers", target(args.computerId)));
    }),
  );

  server.registerTool(
    "rakazo_computer_exec",
    {
      description: "Run one argv command in the workspace (no shell: spell out bash -lc yourself).",
      inputSchema: {
        computerId,
        argv: z.array(z.string()).min(1),
        cwd: z.string().optional(),
        timeoutMs: z.number().int().min(1).max(600_000).optional(),
      },
    },
    guarded(async ({ computerId: id, ...command }) =>
      text(await call("computer_exec", { ...target(id), ...command })),
    ),
  );

  server.registerTool(
    "rakazo_file",
    {
      description: "Read or write one workspace-relative text file.",
      inputSchema: {
        computerId,
        op: z.enum(["read", "write"]),
        path: z.string().min(1),
        content: z.string().optional(),
      },
    },
    guarded(async ({ computerId: id, op, path, content }) => {
      if (op === "write" && content === undefined)
        throw new BridgeError("INVALID_INPUT", "write needs content");
      const body = op === "read" ? { op, path } : { op, path, content };
      return text(await call("file", { ...target(id), ...body }));
    }),
  );

  server.registerTool(
    "rakazo_computer_observe",
    { description: "Screenshot this session's screen on the computer.", inputSchema: { computerId } },
    guarded(async ({ computerId: id }) => {
      const frame = (await call("computer_observe", target(id))) as {
        pngBase64: string;
        width: number;
        height: number;
      };
      return {
        content: [
          { type: "image", data: frame.pngBase64, mimeType: "image/png" },
          { type: "text", text: `${frame.width}x${frame.height}` },
        ],
      };
    }),
  );

  server.registerTool(
    "rakazo_computer_browser",
    {
      description:
        "Drive this session's browser: navigate to url, snapshot the page (text and element refs), or act on refs (click, fill, select, check, press, scroll, wait).",
      inputSchema: {
        computerId,
        action: z.enum(["navigate", "snapshot", "act"]),
        url: z.string().optional(),
        actions: z.array(z.record(z.string(), z.unknown())).optional(),
      },
    },
    guarded(async ({ computerId: id, action, url, actions }) => {
      const body =
        action === "navigate" ? { action, url } : action === "act" ? { action, actions } : { action };
      return text(await call("computer_browser", { ...target(id), ...body }));
    }),
  );

  server.registerTool(
    "rakazo_process",
    {
      description:
        "Background commands: start one (argv, no shell) and get a handle; read its output from a byte offset (since: 0, then each answer's next; waitMs to wait for more) with running/exitCode; kill its whole process group.",
      inputSchema: {
        computerId,
        op: z.enum(["start", "read", "kill"]),
        argv: z.array(z.string()).min(1).optional(),
        cwd: z.string().optional(),
        handle: z.string().optional(),
        since: z.number().int().min(0).optional(),
        waitMs: z.number().int().min(0).max(30_000).optional(),
        signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP"]).optional(),
      },
    },
    guarded(async ({ computerId: id, op, ...rest }) => {
      if (op === "start" && rest.argv === undefined)
        throw new BridgeError("INVALID_INPUT", "start needs argv");
      if (op !== "start" && rest.handle === undefined)
        throw new BridgeError("INVALID_INPUT", `${op} needs handle`);
      const body = Object.fromEntries(Object.entries({ op, ...rest }).filter(([, v]) => v !== undefined));
      return text(await call("computer_process", { ...target(id), ...body }));
    }),
  );

  server.registerTool(
    "rakazo_computer_destroy",
    { description: "Stop and delete a computer (idempotent).", inputSchema: { computerId } },
    guarded(async ({ computerId: id }) => {
      const which = target(id);
      const result = await call("computer_destroy", which);
      held.delete(which.computerId);
      if (current === which.computerId) current = undefined;
      return text(result);
    }),
  );

  // The harness's native tools, routed into the computer.
  server.registerTool(
    "bash",
    {
      description: "Run a bash command in the computer's workspace.",
      inputSchema: { command: z.string().min(1), timeoutMs: z.number().int().min(1).max(600_000).optional() },
    },
    guarded(async (args) => text(await call("bash", { ...target(), ...args }))),
  );
  server.registerTool(
    "read",
    {
      description: "Read a text file of the computer's workspace.",
      inputSchema: { path: z.string().min(1) },
    },
    guarded(async (args) =>
      text(((await call("read", { ...target(), ...args })) as { content: string }).content),
    ),
  );
  server.registerTool(
    "write",
    {
      description: "Write a text file of the computer's workspace.",
      inputSchema: { path: z.string().min(1), content: z.string() },
    },
    guarded(async (args) => text(await call("write", { ...target(), ...args }))),
  );
  server.registerTool(
    "edit",
    {
      description: "Replace one exact, unique occurrence of oldText with newText in a workspace file.",
      inputSchema: { path: z.string().min(1), oldText: z.string().min(1), newText: z.string() },
    },
    guarded(async (args) => text(await call("edit", { ...target(), ...args }))),
  );

  return {
    server,
    /** Releases every computer this session holds (computers.ts decides which are destroyed). */
    async close(): Promise<void> {
      for (const [id, holding] of held) {
        await call("computer_release", {
          computerId: id,
          capability: holding.capability,
          keep: holding.keep,
        }).catch(() => undefined);
      }
      held.clear();
      await server.close();
    },
  };
}
