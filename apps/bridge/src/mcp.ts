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
import { z } from "zod";
import { BridgeError } from "./errors.ts";
import { failure, READS, RUNS, SessionTools, text } from "./mcp-tools.ts";
import { pageActions, type ToolName } from "./tools.ts";

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

/** Destroyed computers a session still answers a retried destroy for. */
const DESTROYED_REMEMBERED = 64;

/** One harness session's MCP server and what it holds. */
export function createMcpSession(call: ToolCaller, defaults: SessionDefaults) {
  const held = new Map<string, Holding>();
  /** Computers this session destroyed, by id: their last capability, for a retried destroy. */
  const destroyed = new Map<string, string>();
  let current: string | undefined;
  const tools = new SessionTools();
  const tool = tools.register;

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

  const computerId = z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("A computer of this session; default: the last one created");

  tool(
    "rakazo_computer_create",
    {
      title: "Create or adopt a computer",
      description:
        "Create or re-adopt this conversation's computer (a Linux desktop with a browser). share: the Team's computer with a screen of your own; account: one long-lived computer for every conversation naming it. keep: leave it running when the session ends.",
      input: {
        share: z.boolean().optional(),
        account: z.string().min(1).max(160).optional(),
        keep: z.boolean().optional(),
      },
      // The same scope always names the same computer: creating again adopts it.
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
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
      destroyed.delete(made.computerId);
      current = made.computerId;
      const { capability: _, ...shown } = made as Record<string, unknown>;
      return text(shown);
    },
  );

  tool(
    "rakazo_computers",
    {
      title: "List computers",
      description: "List this session's computers, or report one's state and screens with computerId.",
      input: { computerId },
      hints: READS,
    },
    async (args) => {
      if (args.computerId === undefined) {
        return text(
          [...held.entries()].map(([id, h]) => ({ computerId: id, keep: h.keep, current: id === current })),
        );
      }
      return text(await call("computers", target(args.computerId)));
    },
  );

  tool(
    "rakazo_computer_exec",
    {
      title: "Run a command",
      description: "Run one argv command in the workspace (no shell: spell out bash -lc yourself).",
      input: {
        computerId,
        argv: z.array(z.string()).min(1).max(1_000),
        cwd: z.string().max(4_096).optional(),
        timeoutMs: z.number().int().min(1).max(600_000).optional(),
      },
      hints: RUNS,
    },
    async ({ computerId: id, ...command }) =>
      text(await call("computer_exec", { ...target(id), ...command })),
  );

  tool(
    "rakazo_file",
    {
      title: "Read or write a file",
      description:
        "Read or write one workspace-relative text file (write needs content; it replaces the file).",
      input: {
        computerId,
        op: z.enum(["read", "write"]),
        path: z.string().min(1).max(4_096),
        content: z.string().optional(),
      },
      // Writing replaces what was there; writing the same content again changes nothing more.
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ computerId: id, op, path, content }) => {
      if (op === "write" && content === undefined) return failure("INVALID_INPUT", "write needs content");
      const body = op === "read" ? { op, path } : { op, path, content };
      return text(await call("file", { ...target(id), ...body }));
    },
  );

  tool(
    "rakazo_computer_observe",
    {
      title: "Screenshot",
      description: "Screenshot this session's screen on the computer.",
      input: { computerId },
      hints: READS,
    },
    async ({ computerId: id }) => {
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
    },
  );

  tool(
    "rakazo_computer_browser",
    {
      title: "Drive the browser",
      description:
        "Drive this session's browser: navigate to url, snapshot the page (text and element refs), or act on refs with actions (click, fill, select, check, press, scroll, wait; run in order, stopping at the first that fails). A failed action is an error with its code (STALE_REF: take a new snapshot) and how many actions completed.",
      input: {
        computerId,
        action: z.enum(["navigate", "snapshot", "act"]),
        url: z.string().min(1).max(8_192).optional().describe("navigate: an http(s) URL"),
        actions: pageActions.optional().describe("act: the page actions, in order"),
      },
      hints: RUNS,
    },
    async ({ computerId: id, action, url, actions }) => {
      if (action === "navigate" && url === undefined) return failure("INVALID_INPUT", "navigate needs url");
      if (action === "act" && actions === undefined) return failure("INVALID_INPUT", "act needs actions");
      const body =
        action === "navigate" ? { action, url } : action === "act" ? { action, actions } : { action };
      return text(await call("computer_browser", { ...target(id), ...body }));
    },
  );

  tool(
    "rakazo_process",
    {
      title: "Background commands",
      description:
        "Background commands: start one (argv, no shell) and get a handle; read its output from a byte offset (since: 0, then each answer's next; waitMs to wait for more) with running/exitCode; kill its whole process group.",
      input: {
        computerId,
        op: z.enum(["start", "read", "kill"]),
        argv: z.array(z.string()).min(1).max(1_000).optional(),
        cwd: z.string().max(4_096).optional(),
        handle: z.string().min(1).max(100).optional(),
        since: z.number().int().min(0).optional(),
        waitMs: z.number().int().min(0).max(30_000).optional(),
        signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP"]).optional(),
      },
      hints: RUNS,
    },
    async ({ computerId: id, op, ...rest }) => {
      if (op === "start" && rest.argv === undefined) return failure("INVALID_INPUT", "start needs argv");
      if (op !== "start" && rest.handle === undefined) return failure("INVALID_INPUT", `${op} needs handle`);
      const body = Object.fromEntries(Object.entries({ op, ...rest }).filter(([, v]) => v !== undefined));
      return text(await call("computer_process", { ...target(id), ...body }));
    },
  );

  tool(
    "rakazo_computer_destroy",
    {
      title: "Destroy a computer",
      description: "Stop and delete a computer (idempotent: destroying it again answers destroyed: false).",
      input: { computerId },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ computerId: id }) => {
      // A retry after success (by id, or as it was sent: for the current computer, which the
      // first call ended) names a computer this session destroyed: the bridge still knows the
      // capability that destroy revoked and answers it like the API's idempotent destroy.
      const named = id ?? current ?? [...destroyed.keys()].at(-1);
      const gone = named === undefined || held.has(named) ? undefined : destroyed.get(named);
      const which = gone === undefined ? target(id) : { computerId: named as string, capability: gone };
      const result = await call("computer_destroy", which);
      held.delete(which.computerId);
      destroyed.delete(which.computerId);
      destroyed.set(which.computerId, which.capability);
      if (destroyed.size > DESTROYED_REMEMBERED) destroyed.delete(destroyed.keys().next().value as string);
      if (current === which.computerId) current = undefined;
      return text(result);
    },
  );

  // The harness's native tools, routed into the computer.
  tool(
    "bash",
    {
      title: "Bash",
      description: "Run a bash command in the computer's workspace.",
      input: {
        command: z.string().min(1).max(100_000),
        timeoutMs: z.number().int().min(1).max(600_000).optional(),
      },
      hints: RUNS,
    },
    async (args) => text(await call("bash", { ...target(), ...args })),
  );
  tool(
    "read",
    {
      title: "Read a file",
      description: "Read a text file of the computer's workspace.",
      input: { path: z.string().min(1).max(4_096) },
      hints: READS,
    },
    async (args) => text(((await call("read", { ...target(), ...args })) as { content: string }).content),
  );
  tool(
    "write",
    {
      title: "Write a file",
      description: "Write a text file of the computer's workspace.",
      input: { path: z.string().min(1).max(4_096), content: z.string() },
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => text(await call("write", { ...target(), ...args })),
  );
  tool(
    "edit",
    {
      title: "Edit a file",
      description: "Replace one exact, unique occurrence of oldText with newText in a workspace file.",
      input: { path: z.string().min(1).max(4_096), oldText: z.string().min(1), newText: z.string() },
      // Applied twice, the second finds no oldText (or another occurrence): not idempotent.
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args) => text(await call("edit", { ...target(), ...args })),
  );

  const server = tools.serve();
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
