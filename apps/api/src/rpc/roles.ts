/**
 * The role gate: a space's `viewer` reads only. Before a handler runs, a
 * call that is not on the read list below and names a space — its `spaceId`, or the space of
 * its `computerId` or `runId` — in which the caller is a viewer is refused with FORBIDDEN
 * (`details.reason: "viewer_read_only"`). The list is of what a viewer may do; an RPC missing
 * from it is refused to viewers (a new RPC is closed to them until someone decides otherwise).
 * Owner-only verbs (invites, roles, removing others) check the owner role in their service.
 * A call naming no space the caller is in passes on, and its own check answers NOT_FOUND as
 * for anyone (the gate is no existence oracle).
 */
import type { RpcName } from "@rakazo/api-contract";
import { AppError, type Caller, roleForNamedSpace, type ServiceContext } from "@rakazo/services";

/** What a viewer may call (besides what names no space: their own tokens, space/create, invite/accept). */
const VIEWER_MAY: ReadonlySet<RpcName> = new Set<RpcName>([
  "space/list",
  "bot/list",
  "member/list",
  // Leaving the space: the service lets anyone remove themselves and only owners others.
  "member/remove",
  "computer/get",
  "computer/list",
  "computer/files/list",
  "computer/files/read",
  "computer/files/download",
  "computer/attachments/list",
  "computer/attachments/download",
  "computer/activity",
  "computer/operations",
  "run/get",
  // A bot's work, read: its transcript, its run history, the space's takeover requests, whether
  // a model is configured, what waits for approval and the bot's policy (deciding is a change).
  "run/transcript",
  "run/list",
  "run/waiting",
  "agent/status",
  "approval/list",
  "bot/policy/get",
]);

/** RPCs a viewer may call with some inputs only. */
const VIEWER_MAY_WITH: Partial<Record<RpcName, (input: Record<string, unknown>) => boolean>> = {
  // Watching a screen is reading; controlling it is not.
  "computer/screenUrl": (input) => input.policy === "view",
};

export async function enforceRole(
  ctx: Pick<ServiceContext, "db">,
  caller: Caller,
  name: string,
  input: unknown,
): Promise<void> {
  if (VIEWER_MAY.has(name as RpcName) || typeof input !== "object" || input === null) return;
  const named = input as Record<string, unknown>;
  if (VIEWER_MAY_WITH[name as RpcName]?.(named)) return;
  if (named.spaceId === undefined && named.computerId === undefined && named.runId === undefined) return;
  if ((await roleForNamedSpace(ctx, caller, named)) !== "viewer") return;
  throw new AppError("FORBIDDEN", "a viewer of this space may only read", { reason: "viewer_read_only" });
}
