/**
 * The bridge's tools over plain HTTP (`POST /v1/<tool>`): the seven of the external surface
 * plus bash/read/write/edit, which route a harness's native tools into the computer. Every tool
 * but create and list names a computer with the capability create returned.
 */
import { pageActionSchema } from "@rakazo/protocol";
import { z } from "zod";
import type { ClientComputers } from "./computers.ts";
import { BridgeError } from "./errors.ts";
import { scopeSchema } from "./scope.ts";

const held = { computerId: z.string().min(1).max(100), capability: z.string().min(1).max(200) };
const path = z.string().min(1).max(4_096);
const timeoutMs = z.number().int().min(1).max(600_000).optional();
/** The page action batch: the shape the API's contract and the supervisor check, written once. */
export const pageActions = z.array(pageActionSchema).min(1).max(50);
const processHandle = z.string().min(1).max(100);

const TOOL_INPUTS = {
  computer_create: z.strictObject({ scope: scopeSchema }),
  computers: z.union([z.strictObject({ scope: scopeSchema }), z.strictObject(held)]),
  computer_exec: z.strictObject({
    ...held,
    argv: z.array(z.string()).min(1).max(1_000),
    cwd: z.string().max(4_096).optional(),
    env: z.record(z.string(), z.string()).optional(),
    stdin: z.string().optional(),
    timeoutMs,
  }),
  file: z.discriminatedUnion("op", [
    z.strictObject({ ...held, op: z.literal("read"), path }),
    z.strictObject({ ...held, op: z.literal("write"), path, content: z.string() }),
  ]),
  computer_observe: z.strictObject(held),
  computer_browser: z.discriminatedUnion("action", [
    z.strictObject({ ...held, action: z.literal("navigate"), url: z.string().min(1).max(8_192) }),
    z.strictObject({ ...held, action: z.literal("snapshot") }),
    z.strictObject({ ...held, action: z.literal("act"), actions: pageActions }),
  ]),
  // Background commands: a harness's shell provider `start()`s, reads by offset, kills.
  computer_process: z.discriminatedUnion("op", [
    z.strictObject({
      ...held,
      op: z.literal("start"),
      argv: z.array(z.string()).min(1).max(1_000),
      cwd: z.string().max(4_096).optional(),
      env: z.record(z.string(), z.string()).optional(),
    }),
    z.strictObject({
      ...held,
      op: z.literal("read"),
      handle: processHandle,
      since: z.number().int().min(0).optional(),
      waitMs: z.number().int().min(0).max(30_000).optional(),
    }),
    z.strictObject({
      ...held,
      op: z.literal("kill"),
      handle: processHandle,
      signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP"]).optional(),
    }),
  ]),
  computer_destroy: z.strictObject(held),
  computer_release: z.strictObject({ ...held, keep: z.boolean().default(false) }),
  bash: z.strictObject({ ...held, command: z.string().min(1).max(100_000), timeoutMs }),
  read: z.strictObject({ ...held, path }),
  write: z.strictObject({ ...held, path, content: z.string() }),
  edit: z.strictObject({ ...held, path, oldText: z.string().min(1), newText: z.string() }),
} as const;

export type ToolName = keyof typeof TOOL_INPUTS;
type ToolInput<N extends ToolName> = z.infer<(typeof TOOL_INPUTS)[N]>;

type Handlers = {
  [N in ToolName]: (computers: ClientComputers, input: ToolInput<N>) => Promise<unknown>;
};

const HANDLERS: Handlers = {
  computer_create: (computers, { scope }) => computers.create(scope),
  computers: (computers, input) =>
    "scope" in input
      ? computers.list(input.scope)
      : computers.use(input, ({ computerId }) =>
          computers.api.call("external/computer/state", { computerId }),
        ),
  computer_exec: (computers, { computerId: _, capability: __, ...command }) =>
    computers.use({ computerId: _, capability: __ }, ({ computerId }) =>
      computers.api.call("external/computer/exec", { computerId, ...command }),
    ),
  file: (computers, input) =>
    computers.use(input, ({ computerId }) =>
      input.op === "read"
        ? computers.api.call("external/file/read", { computerId, path: input.path })
        : computers.api.call("external/file/write", { computerId, path: input.path, content: input.content }),
    ),
  computer_observe: (computers, input) =>
    computers.use(input, ({ computerId, screen }) =>
      computers.api.call("external/computer/observe", { computerId, screen }),
    ),
  computer_browser: (computers, input) =>
    computers.use(input, ({ computerId, screen }) => {
      if (input.action === "navigate") {
        return computers.api.call("external/browser/navigate", { computerId, screen, url: input.url });
      }
      if (input.action === "snapshot")
        return computers.api.call("external/browser/snapshot", { computerId, screen });
      return computers.api
        .call("external/browser/act", { computerId, screen, actions: input.actions })
        .then(actFailed);
    }),
  computer_process: (computers, input) => {
    const { computerId: _, capability: __, op, ...rest } = input;
    if (op === "start") {
      return computers.use(input, ({ computerId }) =>
        computers.api.call("external/process/start", { computerId, ...(rest as { argv: string[] }) }),
      );
    }
    // Reads may wait for output: they do not hold the computer's queue meanwhile.
    if (op === "read") {
      return computers.alongside(input, ({ computerId }) =>
        computers.api.call("external/process/read", { computerId, ...(rest as { handle: string }) }),
      );
    }
    return computers.use(input, ({ computerId }) =>
      computers.api.call("external/process/kill", { computerId, ...(rest as { handle: string }) }),
    );
  },
  computer_destroy: (computers, input) => computers.destroy(input),
  computer_release: (computers, input) => computers.release(input, input.keep),
  bash: (computers, input) =>
    computers.use(input, ({ computerId }) =>
      computers.api.call("external/computer/exec", {
        computerId,
        argv: ["bash", "-lc", input.command],
        ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
      }),
    ),
  read: (computers, input) =>
    computers.use(input, ({ computerId }) =>
      computers.api.call("external/file/read", { computerId, path: input.path }),
    ),
  write: (computers, input) =>
    computers.use(input, ({ computerId }) =>
      computers.api.call("external/file/write", { computerId, path: input.path, content: input.content }),
    ),
  // One exact, unique occurrence is replaced; read and write run in one queued call.
  edit: (computers, input) =>
    computers.use(input, async ({ computerId }) => {
      const { content } = await computers.api.call("external/file/read", { computerId, path: input.path });
      const at = content.indexOf(input.oldText);
      if (at < 0) throw new BridgeError("INVALID_INPUT", "oldText does not occur in the file");
      if (content.indexOf(input.oldText, at + 1) >= 0) {
        throw new BridgeError("INVALID_INPUT", "oldText occurs more than once; make it unique");
      }
      const next = content.slice(0, at) + input.newText + content.slice(at + input.oldText.length);
      return computers.api.call("external/file/write", { computerId, path: input.path, content: next });
    }),
};

/** Status of a page action batch that stopped at a failed action (its code says which). */
const PAGE_ACTION_FAILED_STATUS = 409;

/**
 * The API answers a batch that stopped at a failed action like one that finished, with an
 * `error`: to a caller of the bridge that is a failure with the action's stable code (STALE_REF,
 * UNKNOWN_REF, NOT_ACTIONABLE, TIMEOUT, FAILED) and the report in `details` — how many actions
 * completed, and whether the failed one may have taken effect (`uncertain`).
 */
function actFailed<R extends { error?: { code: string; message: string } | undefined }>(result: R): R {
  if (result.error === undefined) return result;
  const { error, ...report } = result;
  throw new BridgeError(error.code, error.message, PAGE_ACTION_FAILED_STATUS, { ...error, ...report });
}

function isToolName(name: string): name is ToolName {
  return Object.hasOwn(TOOL_INPUTS, name);
}

/** Validates `body` against the tool's input and runs it on the caller client's computers. */
export async function runTool(computers: ClientComputers, name: string, body: unknown): Promise<unknown> {
  if (!isToolName(name)) throw new BridgeError("UNKNOWN_TOOL", `unknown tool ${name.slice(0, 60)}`);
  const parsed = TOOL_INPUTS[name].safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BridgeError(
      "INVALID_INPUT",
      `${issue?.path.join(".") || name}: ${issue?.message ?? "invalid input"}`,
    );
  }
  return (HANDLERS[name] as (c: ClientComputers, i: unknown) => Promise<unknown>)(computers, parsed.data);
}
