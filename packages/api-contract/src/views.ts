/** Output shapes shared by several RPCs; each mirrors a view type in @rakazo/services. */
import { z } from "zod";
import { timestamp } from "./define.ts";

export const computerView = z.strictObject({
  id: z.string(),
  spaceId: z.string(),
  name: z.string(),
  mode: z.enum(["team", "private"]),
  ownerBotId: z.string().nullable(),
  providerKind: z.string(),
  state: z.enum([
    "unprovisioned",
    "provisioning",
    "running",
    "stopping",
    "stopped",
    "deleting",
    "deleted",
    "failed",
  ]),
  homeRevision: z.number().int(),
  lastError: z.string().nullable(),
  /** The size fixed at create (issue 12); null for computers made before sizing existed. */
  size: z.strictObject({ memoryMib: z.number(), cpus: z.number(), pids: z.number().int() }).nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** `computer/get`: the view plus what the running machine was found to have (null while none runs). */
export const computerDetails = computerView.extend({
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
});

export const runView = z.strictObject({
  id: z.string(),
  computerId: z.string(),
  botId: z.string(),
  status: z.enum(["queued", "running", "waiting_takeover", "completed", "failed", "canceled"]),
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
