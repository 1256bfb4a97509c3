/**
 * The external computer surface's lifecycle verbs (EXT-2, EXT-3): create-or-adopt by a
 * caller-chosen key, list, state, destroy. The key → computer mapping lives in
 * `external_computers`; a transaction-scoped advisory lock on the key makes two racing creates
 * agree on one computer. Nothing is held by the caller: the same key finds the same computer
 * from any replica, after any restart.
 */
import { bots, computers, externalComputers } from "@rakazo/db";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { requireComputerEvenDeleted } from "../computers/access.ts";
import { insertComputer } from "../computers/create.ts";
import { deleteComputer, startComputer } from "../computers/lifecycle.ts";
import { enqueueOperation } from "../computers/operations.ts";
import type { ServiceContext } from "../context.ts";
import { AppError, isAppError } from "../errors.ts";
import { EXTERNAL_CALLER, EXTERNAL_SPACE_ID, ensureExternalAccount, ensureScreen } from "./account.ts";

type ComputerRow = typeof computers.$inferSelect;
const GONE_STATES: readonly ComputerRow["state"][] = ["deleting", "deleted"];
const DEFAULT_WAIT_MS = 120_000;
const POLL_MS = 200;

export interface ExternalComputerView {
  readonly computerId: string;
  readonly key: string;
  readonly state: ComputerRow["state"];
  readonly lastError: string | null;
  readonly createdAt: string;
}

export interface ExternalScreenView {
  readonly screen: string;
  readonly botId: string;
  /** The X display serving this screen now; null until its first graphical call (CMP-4). */
  readonly display: number | null;
}

function view(row: ComputerRow, key: string): ExternalComputerView {
  return {
    computerId: row.id,
    key,
    state: row.state,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
  };
}

async function currentRow(
  ctx: Pick<ServiceContext, "db">,
  computerId: string,
): Promise<ComputerRow | undefined> {
  const [row] = await ctx.db.select().from(computers).where(eq(computers.id, computerId)).limit(1);
  return row;
}

/** Polls the row until `done` says so or the wait ends; returns the last row seen. */
async function waitFor(
  ctx: ServiceContext,
  computerId: string,
  done: (row: ComputerRow) => boolean,
): Promise<ComputerRow | undefined> {
  const deadline = Date.now() + (ctx.firstUseWaitMs ?? DEFAULT_WAIT_MS);
  for (;;) {
    const row = await currentRow(ctx, computerId);
    if (!row || done(row) || Date.now() > deadline) return row;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Create-or-adopt (EXT-2): the computer `key` names — created when there is none or the last one
 * was destroyed — with `screen` registered on it. `wait` (default) returns once it runs or failed.
 */
export async function createOrAdoptExternal(
  ctx: ServiceContext,
  input: { readonly key: string; readonly screen: string; readonly wait?: boolean },
): Promise<{ computer: ExternalComputerView; screen: ExternalScreenView; created: boolean }> {
  await ensureExternalAccount(ctx);
  const botId = await ensureScreen(ctx, input.screen);
  const outcome = await ctx.db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${`rakazo-external:${input.key}`}, 0))`,
    );
    const [found] = await tx
      .select({ computer: computers })
      .from(externalComputers)
      .innerJoin(computers, eq(computers.id, externalComputers.computerId))
      .where(eq(externalComputers.key, input.key))
      .limit(1);
    if (found && !GONE_STATES.includes(found.computer.state))
      return { row: found.computer, operationId: null };
    if (found) await tx.delete(externalComputers).where(eq(externalComputers.key, input.key));
    const inserted = await insertComputer(tx, ctx, {
      spaceId: EXTERNAL_SPACE_ID,
      name: input.key.slice(0, 100),
      mode: "team",
      ownerBotId: null,
    });
    await tx.insert(externalComputers).values({ key: input.key, computerId: inserted.row.id });
    return inserted;
  });
  let row = outcome.row;
  if (outcome.operationId) {
    await enqueueOperation(ctx, "computer.provision", row.id, outcome.operationId);
    ctx.log.info("external.computer_created", { computerId: row.id });
  } else if (row.state === "stopped" || row.state === "unprovisioned") {
    // Adopting a computer the idle sweeper stopped starts it again; a racing start already did.
    await startComputer(ctx, EXTERNAL_CALLER, { computerId: row.id }).catch((error: unknown) => {
      if (!isAppError(error) || error.code !== "CONFLICT") throw error;
    });
  }
  if (input.wait !== false) {
    row =
      (await waitFor(ctx, row.id, (r) => !["unprovisioned", "provisioning", "stopped"].includes(r.state))) ??
      row;
  }
  return {
    computer: view(row, input.key),
    screen: { screen: input.screen, botId, display: null },
    created: outcome.operationId !== null,
  };
}

export async function listExternalComputers(ctx: ServiceContext): Promise<ExternalComputerView[]> {
  await ensureExternalAccount(ctx);
  const rows = await ctx.db
    .select({ computer: computers, key: externalComputers.key })
    .from(externalComputers)
    .innerJoin(computers, eq(computers.id, externalComputers.computerId))
    .orderBy(asc(externalComputers.createdAt));
  return rows.filter((r) => !GONE_STATES.includes(r.computer.state)).map((r) => view(r.computer, r.key));
}

/** The external computer `computerId`, or NOT_FOUND (foreign, deleted and unknown alike). */
async function requireExternal(
  ctx: ServiceContext,
  computerId: string,
): Promise<{ row: ComputerRow; key: string }> {
  await ensureExternalAccount(ctx);
  const [found] = await ctx.db
    .select({ computer: computers, key: externalComputers.key })
    .from(externalComputers)
    .innerJoin(computers, eq(computers.id, externalComputers.computerId))
    .where(and(eq(externalComputers.computerId, computerId), eq(computers.spaceId, EXTERNAL_SPACE_ID)))
    .limit(1);
  if (!found || GONE_STATES.includes(found.computer.state))
    throw new AppError("NOT_FOUND", "computer not found");
  return { row: found.computer, key: found.key };
}

export { requireExternal as requireExternalComputer };

/** The computer and its screens, with the display each one has now (EXT-3). */
export async function getExternalComputerState(
  ctx: ServiceContext,
  input: { readonly computerId: string },
): Promise<{ computer: ExternalComputerView; screens: ExternalScreenView[] }> {
  const { row, key } = await requireExternal(ctx, input.computerId);
  const screens: ExternalScreenView[] = [];
  if (row.state === "running" && row.providerRef && row.providerKind === ctx.provider.kind) {
    const desktop = ctx.provider.sandbox(row.providerRef).desktop;
    const slots = desktop ? await desktop.list().catch(() => []) : [];
    const ids = slots.map((s) => s.botId);
    const names =
      ids.length === 0
        ? []
        : await ctx.db.select({ id: bots.id, name: bots.name }).from(bots).where(inArray(bots.id, ids));
    for (const slot of slots) {
      const name = names.find((n) => n.id === slot.botId)?.name;
      if (name !== undefined) screens.push({ screen: name, botId: slot.botId, display: slot.display });
    }
  }
  screens.sort((a, b) => a.screen.localeCompare(b.screen));
  return { computer: view(row, key), screens };
}

/**
 * Idempotent destroy (EXT-2): an unknown, foreign or already destroyed id succeeds with
 * `destroyed: false`. The key is released at once; `wait` (default) returns once the machine is
 * gone (state `deleted`).
 */
export async function destroyExternalComputer(
  ctx: ServiceContext,
  input: { readonly computerId: string; readonly wait?: boolean },
): Promise<{ computerId: string; destroyed: boolean; state: ComputerRow["state"] | "unknown" }> {
  await ensureExternalAccount(ctx);
  let current: ComputerRow;
  try {
    current = await requireComputerEvenDeleted(ctx, EXTERNAL_CALLER, input.computerId);
  } catch (error) {
    if (isAppError(error) && error.code === "NOT_FOUND") {
      return { computerId: input.computerId, destroyed: false, state: "unknown" };
    }
    throw error;
  }
  if (current.state !== "deleted") {
    await deleteComputer(ctx, EXTERNAL_CALLER, { computerId: current.id }).catch((error: unknown) => {
      // A racing destroy already moved it on.
      if (!isAppError(error) || error.code !== "CONFLICT") throw error;
    });
  }
  await ctx.db.delete(externalComputers).where(eq(externalComputers.computerId, current.id));
  if (current.state === "deleted") return { computerId: current.id, destroyed: false, state: "deleted" };
  let state: ComputerRow["state"] = "deleting";
  if (input.wait !== false)
    state = (await waitFor(ctx, current.id, (r) => r.state === "deleted"))?.state ?? state;
  return { computerId: current.id, destroyed: true, state };
}
