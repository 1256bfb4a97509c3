/**
 * How a session's MCP tools are declared and served: each tool's input a strict zod object,
 * listed as JSON Schema 2020-12 with its hints and validated before it runs, and every failure
 * answered as a tool error the model can read (its stable code first). The tools themselves and
 * what a session holds are mcp.ts's.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { BridgeError } from "./errors.ts";

type ToolResult = CallToolResult;

export const text = (value: unknown): ToolResult => ({
  content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value, null, 2) }],
});

/** A failure as the model reads it: the stable code first, then the message and any details. */
export const failure = (code: string, message: string, details?: Record<string, unknown>): ToolResult => ({
  content: [
    {
      type: "text",
      text: `${code}: ${message}${details === undefined ? "" : `\n${JSON.stringify(details, null, 2)}`}`,
    },
  ],
  isError: true,
});

/**
 * MCP's tool hints, all four stated for every tool (clients assume the worst of a missing one):
 * a read-only tool changes nothing; a destructive one may change or delete what is there (a
 * shell command may do anything); an idempotent one repeated with the same input changes
 * nothing more; an open-world one may reach beyond the computer (the web, the network).
 */
interface Hints {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}
export const READS: Hints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
/** Runs whatever it is given: a command or a page action can change, delete or send anything. */
export const RUNS: Hints = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/** Which session tools there are: the SDK lists them, with JSON Schema 2020-12 inputs. */
interface SessionTool {
  readonly definition: Tool;
  readonly input: z.ZodType;
  readonly run: (args: never) => Promise<ToolResult>;
}

/** One session's tools: registered once, then served by one MCP server. */
export class SessionTools {
  readonly #tools = new Map<string, SessionTool>();

  /**
   * Registers a tool. Its input is a strict object, listed as JSON Schema 2020-12 (what MCP
   * names as the default dialect; the SDK's own conversion pins draft-07) and validated here, so
   * a bad argument is a tool error the model can read (`INVALID_INPUT: path: message`).
   */
  readonly register = <S extends z.ZodRawShape>(
    name: string,
    spec: { title: string; description: string; input: S; hints: Hints },
    run: (args: z.infer<z.ZodObject<S>>) => Promise<ToolResult>,
  ): void => {
    const input = z.strictObject(spec.input);
    const { $schema, ...schema } = z.toJSONSchema(input, { target: "draft-2020-12", io: "input" });
    this.#tools.set(name, {
      definition: {
        name,
        title: spec.title,
        description: spec.description,
        inputSchema: { $schema, ...schema, type: "object" } as Tool["inputSchema"],
        annotations: { title: spec.title, ...spec.hints },
      },
      input,
      run: run as SessionTool["run"],
    });
  };

  /** The MCP server that lists these tools and runs them. */
  serve(): Server {
    const server = new Server({ name: "rakazo-bridge", version: "0.1.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...this.#tools.values()].map((registered) => registered.definition),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const registered = this.#tools.get(request.params.name);
      // An unknown tool is the caller's protocol mistake, not a tool's failure (the MCP spec's).
      if (!registered) {
        throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name.slice(0, 60)}`);
      }
      const parsed = registered.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where =
          issue?.path.join(".") || (issue?.code === "unrecognized_keys" ? issue.keys.join(", ") : "");
        return failure("INVALID_INPUT", `${where ? `${where}: ` : ""}${issue?.message ?? "invalid input"}`);
      }
      try {
        return await registered.run(parsed.data as never);
      } catch (error) {
        if (error instanceof BridgeError) return failure(error.code, error.message, error.details);
        return failure("INTERNAL", (error as Error).message);
      }
    });

    return server;
  }
}
