import { computers } from "@rakazo/db";
import type { DesktopCapacity, HomeDiskUsage } from "@rakazo/sandbox";
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { requireMembership } from "../identity/spaces.ts";
import { canUpdate } from "../operations/update.ts";
import { type ComputerRow, requireComputer } from "./access.ts";
import { createLiveReports } from "./live-reports.ts";
import { computerTools, type ProbedTool } from "./tools.ts";
import { type ComputerView, toComputerView } from "./view.ts";

/** `computer/get`: the view plus which promised tools the machine really has (PRV-5). */
export interface ComputerDetails extends ComputerView {
  readonly canUpdate: boolean;
  /** What the computer's provider offers (TRM-7): false for a computer of another provider kind. */
  readonly capabilities: { readonly terminal: boolean };
  /** Found by probing the running machine; null while none runs or it cannot say. */
  readonly tools: readonly ProbedTool[] | null;
  /** Live desktops, memory used and the bound (CMP-5); absent when the provider cannot say. */
  readonly desktops?: DesktopCapacity | null;
  /** The home's disk, where the provider keeps one per home; absent otherwise. */
  readonly disk?: HomeDiskUsage;
}

/** How long `computer/get` waits for a running computer's desktop report before leaving it out. */
const CAPACITY_TIMEOUT_MS = 2_000;

/**
 * How long `computer/get` waits for the tools probe of a machine it has not probed yet (an exec
 * in the computer; a just-started one may need its supervisor started first, hundreds of ms).
 * The probe goes on and its answer is kept (tools.ts), so `tools` is null on that first read
 * and known from the next: a computer that just came up does not hold up the poll that sees it.
 */
const TOOLS_WAIT_MS = 100;

/**
 * How long the first `computer/get` of a machine (just started, replaced, or used by this process
 * since) waits for its desktop report: a supervisor that is still starting takes hundreds of ms,
 * and the poll that sees a computer come up should not wait for it. The read goes on and is kept,
 * so the next read has it; a running supervisor answers well within this.
 */
const FIRST_REPORT_WAIT_MS = 250;

/** `promise`'s value, or `fallback` when it has not settled within `ms` (it goes on). */
async function settledWithin<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => {
        timer = setTimeout(() => resolve(fallback), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** One per process: every `computer/get` of a computer shares its live reports (live-reports.ts). */
const liveReports = createLiveReports();

/** This process changed the computer's desktops: its next `computer/get` asks the machine again. */
export function forgetLiveReports(computerId: string): void {
  liveReports.forget(computerId);
}

export async function getComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string },
): Promise<ComputerDetails> {
  const row = await requireComputer(ctx, caller, input.computerId);
  const [tools, disk, desktops] = await Promise.all([
    settledWithin(computerTools(ctx, row), TOOLS_WAIT_MS, null),
    homeDisk(ctx, row),
    desktopReport(ctx, row),
  ]);
  return {
    ...toComputerView(row),
    canUpdate: canUpdate(ctx, row),
    capabilities: { terminal: row.providerKind === ctx.provider.kind && ctx.provider.capabilities.terminal },
    tools,
    ...(disk ? { disk } : {}),
    ...(desktops !== undefined ? { desktops } : {}),
  };
}

/**
 * The running machine's desktop report, kept per machine for LIVE_REPORT_TTL_MS; undefined when
 * none runs or its provider cannot say (the field is then left out), null when it did not answer.
 */
function desktopReport(ctx: ServiceContext, row: ComputerRow): Promise<DesktopCapacity | null | undefined> {
  const ref = row.providerRef;
  if (row.state !== "running" || !ref || row.providerKind !== ctx.provider.kind) {
    return Promise.resolve(undefined);
  }
  const machine = `${row.providerKind}\0${ref}\0${row.updatedAt.getTime()}`;
  // A machine's first read may have to start its supervisor: wait only briefly for it.
  const first = !liveReports.knows("desktops", row.id, machine);
  const report = liveReports.get("desktops", row.id, machine, async () => {
    const desktop = ctx.provider.sandbox(ref).desktop;
    if (!desktop?.capacity) return undefined;
    // A computer that does not answer in time reports null rather than holding up the read.
    let timer: NodeJS.Timeout | undefined;
    const desktops = await Promise.race([
      desktop.capacity().catch(() => null),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), CAPACITY_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    return desktops;
  });
  return first ? settledWithin(report, FIRST_REPORT_WAIT_MS, null) : report;
}

/**
 * The home's disk of a computer on this provider, when it keeps one (read on the host, no exec),
 * kept like the desktop report: reading the mount table and statfs on every call was the largest
 * per-call cost left. A disk attached or grown shows within the same bound.
 */
function homeDisk(ctx: ServiceContext, row: ComputerRow): Promise<HomeDiskUsage | null> {
  const disks = ctx.provider.homeDisks;
  if (row.providerKind !== ctx.provider.kind || !disks) return Promise.resolve(null);
  const machine = `${row.providerKind}\0${row.homeKey}\0${row.updatedAt.getTime()}`;
  return liveReports.get("disk", row.id, machine, () => disks.usage(row.homeKey).catch(() => null));
}

export async function listComputers(
  ctx: ServiceContext,
  caller: Caller,
  input: { spaceId: string },
): Promise<ComputerView[]> {
  await requireMembership(ctx, caller, input.spaceId);
  const rows = await ctx.db
    .select()
    .from(computers)
    .where(and(eq(computers.spaceId, input.spaceId), ne(computers.state, "deleted")))
    // CMP-1: the Team Computer first (the space's own is its oldest team computer).
    .orderBy(sql`${computers.mode} = 'team' desc`, asc(computers.createdAt));
  return rows.map(toComputerView);
}
