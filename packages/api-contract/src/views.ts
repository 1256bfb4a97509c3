/** Shapes shared by several RPCs; each output mirrors a view type in @rakazo/services. */
import { COMPUTER_MODES, COMPUTER_STATES, RUN_STATUSES } from "@rakazo/db/states";
import { z } from "zod";
import { timestamp } from "./define.ts";

/**
 * A computer's network policy. `allow` entries: a DNS name, `*.` + a domain
 * (subdomains), or an IP literal; ports default to 80 and 443.
 */
const networkAllowEntry = z.strictObject({
  host: z
    .string()
    .trim()
    .min(1)
    .max(253)
    .regex(
      /^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$|^[0-9.]+$|^\[?[0-9A-Fa-f:.]+\]?$/,
      "expected a host name, *.domain or an IP address",
    ),
  ports: z.array(z.number().int().min(1).max(65_535)).min(1).max(32).optional(),
});

export const networkPolicy = z
  .strictObject({
    mode: z.enum(["none", "egress", "allowlist"]),
    allow: z.array(networkAllowEntry).max(100).optional(),
  })
  .refine((policy) => policy.mode === "allowlist" || !policy.allow?.length, {
    message: "allow is only for mode allowlist",
    path: ["allow"],
  });

/** A computer's lifecycle state, as stored (`COMPUTER_STATES` of @rakazo/db). */
export const computerState = z.enum(COMPUTER_STATES);

/** Whose computer it is: a space's shared Team Computer or one bot's own (CMP-1). */
export const computerMode = z.enum(COMPUTER_MODES);

export const computerView = z.strictObject({
  id: z.string(),
  spaceId: z.string(),
  name: z.string(),
  mode: computerMode,
  ownerBotId: z.string().nullable(),
  providerKind: z.string(),
  state: computerState,
  homeRevision: z.number().int(),
  lastError: z.string().nullable(),
  size: z
    .strictObject({
      memoryMib: z.number().int(),
      cpus: z.number(),
      pids: z.number().int(),
      diskMib: z.number().int().optional().describe("Absent on computers made before disk sizes."),
    })
    .nullable()
    .describe("The computer's size; null for computers made before sizing (provider defaults)."),
  network: networkPolicy,
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** `computer/get`: the view plus what the running machine was found to have (null while none runs). */
export const computerDetails = computerView.extend({
  canUpdate: z
    .boolean()
    .describe('This provider and image can rebuild it (`computer/update`), not "a newer image exists".'),
  /**
   * What this computer's provider offers beyond exec and files. `terminal`: the browser shell
   * (`computer/terminalUrl`, TRM-7); where false, terminalUrl answers UNSUPPORTED and the web
   * app offers no Shell tab.
   */
  capabilities: z.strictObject({ terminal: z.boolean() }),
  tools: z
    .array(z.enum(["gh", "uv", "pandoc", "pdftotext", "python3"]))
    .readonly()
    .nullable(),
  /** Live desktops, memory used and the bound (CMP-5), for a running computer whose provider says. */
  desktops: z
    .strictObject({
      live: z.number().int(),
      limit: z.number().int(),
      memoryUsedBytes: z.number().nullable(),
      memoryMaxBytes: z.number().nullable(),
      pids: z.number().int().nullable(),
      pidsMax: z.number().int().nullable(),
      desktopMemoryBytes: z.number().nullable(),
    })
    .nullable()
    .optional(),
  disk: z
    .strictObject({ usedBytes: z.number(), sizeBytes: z.number() })
    .optional()
    .describe("The home's disk, where the provider keeps one per home (Docker with home disks on)."),
});

export const runView = z.strictObject({
  id: z.string(),
  computerId: z.string(),
  botId: z.string(),
  status: z.enum(RUN_STATUSES),
  error: z.string().nullable(),
  takeoverReason: z.string().nullable(),
});

export const leaseView = z.strictObject({
  computerId: z.string(),
  botId: z.string(),
  fencingToken: z.number().int(),
  expiresAt: timestamp,
});

export const screenSlot = z.strictObject({ index: z.number().int(), generation: z.number().int() });

/** One screenshot of a bot's screen, as `computer/observe` and `external/computer/observe` answer it. */
export const screenObservation = z.strictObject({
  pngBase64: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  frameHash: z.string(),
  slot: screenSlot,
});

/** What names a command, the same for `computer/exec`, `external/computer/exec` and a background process. */
export const commandFields = {
  argv: z.array(z.string().max(100_000)).min(1).max(1_000),
  cwd: z.string().max(4_096).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
};

/** A foreground command's input beyond its name: what it reads and how long it may take. */
export const execFields = {
  stdin: z.string().max(10_000_000).optional(),
  timeoutMs: z.number().int().min(1).max(600_000).optional(),
};

export const execResult = z.strictObject({
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  truncated: z.boolean(),
});
