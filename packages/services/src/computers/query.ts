import { computers } from "@rakazo/db";
import type { DesktopCapacity, HomeDiskUsage } from "@rakazo/sandbox";
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { requireMembership } from "../identity/spaces.ts";
import { canUpdate } from "../operations/update.ts";
import { requireComputer } from "./access.ts";
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

export async function getComputer(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string },
): Promise<ComputerDetails> {
  const row = await requireComputer(ctx, caller, input.computerId);
  const view = {
    ...toComputerView(row),
    canUpdate: canUpdate(ctx, row),
    capabilities: { terminal: row.providerKind === ctx.provider.kind && ctx.provider.capabilities.terminal },
    tools: await computerTools(ctx, row),
    ...(await homeDisk(ctx, row)),
  };
  const desktop =
    row.state === "running" && row.providerRef && row.providerKind === ctx.provider.kind
      ? ctx.provider.sandbox(row.providerRef).desktop
      : undefined;
  if (!desktop?.capacity) return view;
  // A computer that does not answer in time reports null rather than holding up the read.
  let timer: NodeJS.Timeout | undefined;
  const desktops = await Promise.race([
    desktop.capacity().catch(() => null),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), CAPACITY_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  return { ...view, desktops };
}

/** The home's disk of a computer on this provider, when it keeps one (read on the host, no exec). */
async function homeDisk(
  ctx: ServiceContext,
  row: { providerKind: string; homeKey: string },
): Promise<{ disk?: HomeDiskUsage }> {
  if (row.providerKind !== ctx.provider.kind || !ctx.provider.homeDisks) return {};
  const disk = await ctx.provider.homeDisks.usage(row.homeKey).catch(() => null);
  return disk ? { disk } : {};
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
