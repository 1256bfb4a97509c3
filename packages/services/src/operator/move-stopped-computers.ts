/**
 * Operator verb (`./rakazo computers --move-stopped`) after a provider switch: every stopped
 * (or failed, or never provisioned) computer still on another provider kind is handed to `toKind`. Its old machine is
 * destroyed through its own provider (PRV-3: a ref only ever goes back to its kind), then the
 * row forgets the ref, so the next start provisions a replacement that restores the last stored
 * workspace (PER-2). The workspace itself belongs to the home store and is not touched. Running
 * computers are left alone: they are reported, and move once stopped.
 */
import { computers } from "@rakazo/db";
import type { SandboxProvider } from "@rakazo/sandbox";
import { and, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../context.ts";

export interface MoveOutcome {
  readonly moved: { readonly id: string; readonly from: string }[];
  /** Not stopped: still on their provider. */
  readonly running: { readonly id: string; readonly providerKind: string; readonly state: string }[];
}

/** Stopped or failed machines, and Team Computers never provisioned (no machine to destroy). */
const MOVABLE = ["stopped", "failed", "unprovisioned"] as const;

export async function moveStoppedComputers(
  ctx: Pick<ServiceContext, "db" | "log">,
  input: {
    toKind: string;
    /** The provider that owns machines of `kind`, when it can be reached from here. */
    providerOf: (kind: string) => Promise<SandboxProvider | undefined>;
  },
): Promise<MoveOutcome> {
  const rows = await ctx.db.select().from(computers);
  const moved: MoveOutcome["moved"][number][] = [];
  const running: MoveOutcome["running"][number][] = [];
  for (const row of rows) {
    if (row.state === "deleted" || row.providerKind === input.toKind) continue;
    if (!(MOVABLE as readonly string[]).includes(row.state)) {
      running.push({ id: row.id, providerKind: row.providerKind, state: row.state });
      continue;
    }
    if (row.providerRef) {
      const old = await input.providerOf(row.providerKind);
      if (old) await old.destroy(row.providerRef);
      else
        ctx.log.warn("computer.old_machine_unreachable", {
          computerId: row.id,
          providerKind: row.providerKind,
        });
    }
    const [updated] = await ctx.db
      .update(computers)
      .set({ providerKind: input.toKind, providerRef: null })
      .where(and(eq(computers.id, row.id), inArray(computers.state, [...MOVABLE])))
      .returning({ id: computers.id });
    if (updated) {
      moved.push({ id: row.id, from: row.providerKind });
      ctx.log.info("computer.moved", { computerId: row.id, from: row.providerKind, to: input.toKind });
    }
  }
  return { moved, running };
}
