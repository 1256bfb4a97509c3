/**
 * The supervisor's method table: every RPC's params and result, written once. The supervisor's
 * server validates params with it; every host transport (Unix socket, command path, future
 * remote adapters) validates results with it through `SupervisorCaller.call`.
 *
 * Wire: HTTP/1.1 over a Unix socket, `POST /rpc/<method>` with a JSON body; every answer is a
 * `SupervisorAnswer`. The command path (`supervisor.mjs <method> '<json>'`) prints the same
 * answer on stdout.
 */
import { z } from "zod";
import {
  pageActionSchema,
  pageActResultSchema,
  pageNavigationSchema,
  pageSnapshotSchema,
} from "../page-action.ts";
import { PROCESS_METHODS } from "./processes.ts";

const botId = z.string().min(1).max(200);
const bot = z.object({ botId });
const slotRef = z.object({ index: z.number().int().min(0), generation: z.number().int().min(0) });
const nullableNumber = z.number().nullable();

export const slotStateSchema = z.enum(["free", "starting", "running", "stopping", "teardown_failed"]);

export const healthResultSchema = z.object({
  ok: z.literal(true),
  pid: z.number().int(),
  /** Slots holding resources (starting, running, stopping, teardown_failed). */
  active: z.number().int(),
  /** SANDBOX_TEAM_SCREEN_LIMIT; 0 = no explicit cap. */
  limit: z.number().int(),
  /** Desktops running now. */
  live: z.number().int(),
  /** The computer's cgroup: what bounds new desktops (null = unbounded or unreadable). */
  memory: z.object({ usedBytes: nullableNumber, maxBytes: nullableNumber }),
  pids: z.object({ current: nullableNumber, max: nullableNumber }),
  cpuPressure: nullableNumber,
  /** What admission charges per new desktop. */
  desktopEstimate: z.object({ memoryBytes: z.number(), pids: z.number() }),
  /**
   * The admission in effect (CMP-5, the deployment's RAKAZO_DESKTOP_* or the defaults): what a
   * new desktop is charged, what is always kept free, and the cpu pressure (some avg10, %) at
   * which new desktops are refused (0 = ignored).
   */
  admission: z.object({
    desktop: z.object({ memoryBytes: z.number(), pids: z.number() }),
    floor: z.object({ memoryBytes: z.number(), pids: z.number() }),
    cpuPressureMax: z.number(),
  }),
});

export const observeResultSchema = z.object({
  pngBase64: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  frameHash: z.string(),
  slot: slotRef,
});

export const actResultSchema = z.object({
  completed: z.number().int().min(0),
  total: z.number().int().min(0),
  error: z.object({ code: z.string(), message: z.string(), index: z.number().int() }).optional(),
});

export const slotInfoSchema = z.object({
  botId: z.string(),
  slot: slotRef,
  display: z.number().int(),
  state: slotStateSchema,
  /** ISO timestamps. */
  startedAt: z.string(),
  lastUsedAt: z.string(),
  controlled: z.boolean(),
  /** The slot+generation-unique RFB socket the screen gateway connects to (SCR-2). */
  vncSocket: z.string(),
  /** Chromium's DevTools port, bound to the computer's loopback only (BRW-2). */
  debugPort: z.number().int(),
});

export const revocationRuleSchema = z
  .object({
    id: z.string().optional(),
    botId: z.string().optional(),
    policy: z.enum(["view", "control", "terminal"]).optional(),
    subject: z.string().optional(),
    /** Matches capabilities issued at or before this time (ms). */
    issuedAtOrBefore: z.number().optional(),
    /** When the rule may be forgotten (the longest capability lifetime from now). */
    expiresAt: z.number().default(0),
  })
  .refine((rule) => rule.id !== undefined || rule.issuedAtOrBefore !== undefined, {
    message: "a rule needs id or issuedAtOrBefore",
  });

export const connectionInfoSchema = z.object({
  connectionId: z.string(),
  capabilityId: z.string(),
  botId: z.string(),
  slot: z.number().int(),
  generation: z.number().int(),
  policy: z.enum(["view", "control", "terminal"]),
  startedAt: z.number(),
  droppedInput: z.number(),
});

/**
 * `desktop.act` takes any list and validates each action itself with `desktopActionSchema`,
 * so a malformed action fails the batch at its index (`error.index`), after the ones before it.
 * `page.act` refuses a batch with a malformed action as a whole (`INVALID_ACTION`), before
 * anything reaches the page: page results have no code for the caller's mistakes.
 */
export const SUPERVISOR_METHODS = {
  health: { params: z.object({}), result: healthResultSchema },
  "desktop.observe": { params: bot, result: observeResultSchema },
  "desktop.act": {
    params: z.object({ botId, actions: z.array(z.unknown()).max(100).readonly() }),
    result: actResultSchema,
  },
  "desktop.release": { params: bot, result: z.object({ released: z.boolean() }) },
  /**
   * Closes the bot's Chromium cleanly (profile flushed, PER-7) and keeps its display and x11vnc,
   * so its viewers stay connected; the next observe/act/page call relaunches it with its last
   * session. `closed: false` when the bot has no running desktop or browser.
   */
  "desktop.closeBrowser": { params: bot, result: z.object({ closed: z.boolean() }) },
  "desktop.list": { params: z.object({}), result: z.array(slotInfoSchema) },
  /**
   * Starts the RFB server (x11vnc) of the bot's running desktop unless it serves already and
   * answers its socket. A desktop starts without one: the screen gateway starts it for the
   * first viewer, and this is the same for a tool that dials `vncSocket` itself. Never starts a
   * desktop (`DESKTOP_UNAVAILABLE` without a running one, or when x11vnc did not start).
   */
  "desktop.openScreen": { params: bot, result: z.object({ vncSocket: z.string(), slot: slotRef }) },
  "desktop.setControlled": {
    params: z.object({ botId, controlled: z.boolean() }),
    result: z.object({ controlled: z.boolean(), active: z.boolean() }),
  },
  "screens.configure": {
    params: z.object({
      computerId: z.string().min(1),
      keys: z
        .array(z.object({ kid: z.string(), key: z.string() }))
        .min(1)
        .readonly(),
    }),
    result: z.object({ configured: z.literal(true), kids: z.array(z.string()) }),
  },
  "screens.revoke": {
    params: z.object({ rules: z.array(revocationRuleSchema).min(1).max(1000).readonly() }),
    result: z.object({ closed: z.number().int() }),
  },
  /**
   * TRM-4: starts (or joins) the PTY server beside the gateway for a bot; its shells start in
   * `cwd` (workspace-relative, the bot's folder) with `env` added to the supervisor's.
   */
  "terminal.start": {
    params: z.object({
      botId,
      cwd: z.string().max(4096).default(""),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    }),
    result: z.object({ sessions: z.number().int() }),
  },
  /** TRM-6: ends every shell of a bot (all bots without one) and removes their session files. */
  "terminal.stop": {
    params: z.object({ botId: botId.optional() }),
    result: z.object({ closed: z.number().int() }),
  },
  "screens.check": {
    params: z.object({ ticket: z.string().optional() }),
    result: z.discriminatedUnion("ok", [
      z.object({
        ok: z.literal(true),
        policy: z.enum(["view", "control", "terminal"]),
        slot: z.number().int(),
        generation: z.number().int(),
      }),
      z.object({ ok: z.literal(false), reason: z.string() }),
    ]),
  },
  "screens.connections": { params: z.object({}), result: z.array(connectionInfoSchema) },
  "page.navigate": {
    params: z.object({ botId, url: z.string().min(1).max(8_000) }),
    result: pageNavigationSchema,
  },
  "page.snapshot": { params: bot, result: pageSnapshotSchema },
  "page.act": {
    params: z.object({ botId, actions: z.array(pageActionSchema).min(1).max(50).readonly() }),
    result: pageActResultSchema,
  },
  ...PROCESS_METHODS,
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type SupervisorMethod = keyof typeof SUPERVISOR_METHODS;
export const SUPERVISOR_METHOD_NAMES = Object.keys(SUPERVISOR_METHODS) as SupervisorMethod[];
/** What a caller sends (defaults not yet applied). */
export type SupervisorParams<M extends SupervisorMethod> = z.input<(typeof SUPERVISOR_METHODS)[M]["params"]>;
/** What the server's handler receives, after validation. */
export type SupervisorParsedParams<M extends SupervisorMethod> = z.output<
  (typeof SUPERVISOR_METHODS)[M]["params"]
>;
export type SupervisorResult<M extends SupervisorMethod> = z.output<(typeof SUPERVISOR_METHODS)[M]["result"]>;

export function isSupervisorMethod(method: string): method is SupervisorMethod {
  return Object.hasOwn(SUPERVISOR_METHODS, method);
}

export type HealthResult = SupervisorResult<"health">;
export type ObserveResult = SupervisorResult<"desktop.observe">;
export type ActResultWire = SupervisorResult<"desktop.act">;
export type SlotInfoWire = z.output<typeof slotInfoSchema>;
export type SlotState = z.output<typeof slotStateSchema>;
export type WireSlotRef = z.output<typeof slotRef>;
export type RevocationRuleWire = z.output<typeof revocationRuleSchema>;
export type ConnectionInfoWire = z.output<typeof connectionInfoSchema>;
