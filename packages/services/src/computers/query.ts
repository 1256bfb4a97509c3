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
    computerTools(ctx, row),
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
  return liveReports.get("desktops", row.id, machine, async () => {
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
}

/**
 * The home's disk of a computer on this provider, when it keeps one (read on the host, no exec:
 * a statfs, cheap next to the supervisor call, so read on every call and never stale).
 */
function homeDisk(ctx: ServiceContext, row: ComputerRow): Promise<HomeDiskUsage | null> {
  const disks = ctx.provider.homeDisks;
  if (row.providerKind !== ctx.provider.kind || !disks) return Promise.resolve(null);
  return disks.usage(row.homeKey).catch(() => null);
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
