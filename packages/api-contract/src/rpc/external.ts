/**
 * The external computer surface (EXT-1..3): RPCs for programs outside the app,
 * authorized by the deployment's one `EXTERNAL_COMPUTER_TOKEN` (`auth: "external"`) and served
 * only when it is configured. Computers are named by a caller-chosen key, screens by a
 * caller-chosen identity; neither has to look like a Rakazo id.
 */
import {
  pageActionSchema,
  pageActResultSchema,
  pageNavigationSchema,
  pageSnapshotSchema,
} from "@rakazo/protocol";
import { z } from "zod";
import { computerId, defineContract, timestamp } from "../define.ts";
import { commandFields, computerState, execFields, execResult, screenObservation } from "../views.ts";
import { DESKTOP_ERRORS, EXTERNAL_MACHINE_ERRORS, LIFECYCLE_ERRORS } from "./error-sets.ts";

/**
 * A caller-chosen name: printable, no control characters (it shows up in logs and UIs). The
 * class is Unicode's Cc (C0, DEL, C1) spelled out, so the published pattern is ASCII and reads
 * the same in every regex dialect a generated client may use.
 */
const callerName = z
  .string()
  .min(1)
  .max(200)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the class names them to refuse them.
  .regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, "expected printable text without control characters");

export const externalComputerView = z.strictObject({
  computerId: z.string(),
  key: z.string(),
  state: computerState,
  lastError: z.string().nullable(),
  createdAt: timestamp,
});

export const externalScreenView = z.strictObject({
  screen: z.string(),
  botId: z.string(),
  display: z
    .number()
    .int()
    .nullable()
    .describe("The X display serving the screen now; null until its first graphical call."),
});

const screenTarget = { computerId, screen: callerName };

export const externalComputerCreate = defineContract({
  name: "external/computer/create",
  auth: "external",
  summary: "Create or adopt a computer",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN). Idempotent: the same `key` returns the same computer and the same `screen` the same display and profile; `key` defaults to `screen`. With `wait` (default) it answers once the computer runs or failed.",
  errors: ["CONFLICT", "NOT_FOUND", "OPERATION_IN_PROGRESS", "QUOTA_EXCEEDED", "UNSUPPORTED"],
  input: z.strictObject({
    screen: callerName.describe("The screen identity (its own display and browser profile on the computer)."),
    key: callerName
      .optional()
      .describe(
        "Names the computer; several screens share it by passing the same key. Defaults to `screen`.",
      ),
    wait: z.boolean().default(true).describe("Return only once the computer runs (or failed); default true."),
  }),
  output: z.strictObject({
    computer: externalComputerView,
    screen: externalScreenView,
    created: z.boolean(),
  }),
});

export const externalComputerList = defineContract({
  name: "external/computer/list",
  auth: "external",
  summary: "List external computers",
  description: "External surface (EXTERNAL_COMPUTER_TOKEN): every computer made through it.",
  errors: [],
  input: z.strictObject({}),
  output: z.array(externalComputerView),
});

export const externalComputerState = defineContract({
  name: "external/computer/state",
  auth: "external",
  summary: "Get an external computer's state",
  description: "External surface (EXTERNAL_COMPUTER_TOKEN): the computer and its screens (display numbers).",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ computerId }),
  output: z.strictObject({ computer: externalComputerView, screens: z.array(externalScreenView) }),
});

export const externalComputerExec = defineContract({
  name: "external/computer/exec",
  auth: "external",
  summary: "Run a command",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): one argv command (no shell) on the running computer, from the workspace root.",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "QUOTA_EXCEEDED",
    "STALE_LEASE",
    "UNSUPPORTED",
  ],
  input: z.strictObject({
    computerId,
    ...commandFields,
    ...execFields,
  }),
  output: execResult,
});

/** The one path rule with no bot named (docs/agent-tools.md): relative to the workspace root. */
const workspacePath = z
  .string()
  .min(1)
  .max(4_096)
  .describe(
    "Relative to the workspace root, where exec starts. `..` never leaves the workspace; absolute paths are refused. The answer's `path` is the resolved workspace path.",
  );

export const externalFileRead = defineContract({
  name: "external/file/read",
  auth: "external",
  summary: "Read a text file",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): one UTF-8 text file, the path relative to the workspace root (`..` never leaves it; absolute paths are refused).",
  errors: EXTERNAL_MACHINE_ERRORS,
  input: z.strictObject({ computerId, path: workspacePath }),
  output: z.strictObject({ path: z.string(), content: z.string(), bytes: z.number().int() }),
});

export const externalFileWrite = defineContract({
  name: "external/file/write",
  auth: "external",
  summary: "Write a text file",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): writes one UTF-8 text file (at most 1 MiB), the path relative to the workspace root.",
  errors: EXTERNAL_MACHINE_ERRORS,
  input: z.strictObject({ computerId, path: workspacePath, content: z.string().max(1024 * 1024) }),
  output: z.strictObject({ path: z.string(), bytes: z.number().int() }),
});

export const externalComputerObserve = defineContract({
  name: "external/computer/observe",
  auth: "external",
  summary: "Screenshot a screen",
  description: "External surface (EXTERNAL_COMPUTER_TOKEN): a screenshot of the screen identity's desktop.",
  errors: DESKTOP_ERRORS,
  input: z.strictObject(screenTarget),
  output: screenObservation,
});

export const externalBrowserNavigate = defineContract({
  name: "external/browser/navigate",
  auth: "external",
  summary: "Open a URL in a screen's browser",
  description: "External surface (EXTERNAL_COMPUTER_TOKEN): opens an http(s) URL in the screen's Chromium.",
  errors: DESKTOP_ERRORS,
  input: z.strictObject({ ...screenTarget, url: z.string().min(1).max(8_192) }),
  output: pageNavigationSchema,
});

export const externalBrowserSnapshot = defineContract({
  name: "external/browser/snapshot",
  auth: "external",
  summary: "Read a screen's page",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): the page's text and element refs in the screen's Chromium.",
  errors: DESKTOP_ERRORS,
  input: z.strictObject(screenTarget),
  output: pageSnapshotSchema,
});

export const externalBrowserAct = defineContract({
  name: "external/browser/act",
  auth: "external",
  summary: "Act on a screen's page",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): actions on element refs of the screen's page, in order.",
  errors: DESKTOP_ERRORS,
  input: z.strictObject({ ...screenTarget, actions: z.array(pageActionSchema).min(1).max(50) }),
  output: pageActResultSchema,
});

export const externalComputerDestroy = defineContract({
  name: "external/computer/destroy",
  auth: "external",
  summary: "Destroy a computer",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN). Idempotent: an unknown or already destroyed computer answers `destroyed: false`.",
  errors: LIFECYCLE_ERRORS,
  input: z.strictObject({ computerId, wait: z.boolean().default(true) }),
  /** Idempotent: an unknown or already destroyed computer answers `destroyed: false`. */
  output: z.strictObject({
    computerId: z.string(),
    destroyed: z.boolean(),
    state: z.union([computerState, z.literal("unknown")]),
  }),
});

// Background commands: started on the computer's process manager, read by byte offset
// (long poll: `waitMs`), killed as a process group. A handle is found only through the computer
// that started it; destroying the computer ends them all.

const processHandle = z.string().regex(/^prc_[0-9a-f]{32}$/, "expected a process handle (prc_…)");

export const externalProcessStart = defineContract({
  name: "external/process/start",
  auth: "external",
  summary: "Start a background command",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): starts a command in its own process group and answers its handle. At most 16 run at once per computer (PROCESS_LIMIT); computers without a supervisor answer UNSUPPORTED.",
  errors: EXTERNAL_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    ...commandFields,
  }),
  output: z.strictObject({ computerId: z.string(), handle: z.string(), pid: z.number().int() }),
});

export const externalProcessRead = defineContract({
  name: "external/process/read",
  auth: "external",
  summary: "Read a background command's output",
  description:
    "External surface (EXTERNAL_COMPUTER_TOKEN): output from byte offset `since` (0, then each answer's `next`), waiting up to `waitMs` for more or the exit. A handle of another computer answers NOT_FOUND.",
  errors: EXTERNAL_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    handle: processHandle,
    since: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Byte offset to read from: 0, then each answer's `next`."),
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(30_000)
      .default(0)
      .describe("Wait up to this long for new output or the exit (streaming by long poll)."),
  }),
  output: z.strictObject({
    chunks: z.array(
      z.strictObject({ stream: z.enum(["stdout", "stderr"]), offset: z.number().int(), data: z.string() }),
    ),
    next: z.number().int(),
    dropped: z
      .number()
      .int()
      .describe("Bytes lost to the computer's bounded buffer (the last 1 MiB is kept)."),
    running: z.boolean(),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
  }),
});

export const externalProcessKill = defineContract({
  name: "external/process/kill",
  auth: "external",
  summary: "Signal a background command",
  description: "External surface (EXTERNAL_COMPUTER_TOKEN): signals the command's whole process group.",
  errors: EXTERNAL_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    handle: processHandle,
    signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT", "SIGHUP"]).default("SIGTERM"),
  }),
  output: z.strictObject({ signalled: z.boolean(), running: z.boolean() }),
});
