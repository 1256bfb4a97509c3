/**
 * The enumerations stored in the control plane's text columns (./schema.ts), written once here
 * with no imports, so the API contract (@rakazo/api-contract, also bundled into the web UI)
 * derives its enums from them through `@rakazo/db/states` without loading the database driver.
 */

/** `owner`: everything; `member`: everything but the space's people; `viewer`: reads only (docs/decisions.md, "People"). */
export const SPACE_ROLES = ["owner", "member", "viewer"] as const;
export type SpaceRole = (typeof SPACE_ROLES)[number];

export const API_TOKEN_KINDS = ["api", "web_session"] as const;
export type ApiTokenKind = (typeof API_TOKEN_KINDS)[number];

export const COMPUTER_MODES = ["team", "private"] as const;
export type ComputerMode = (typeof COMPUTER_MODES)[number];

export const COMPUTER_STATES = [
  /** A space's Team Computer before its first use: a row and no machine (CMP-1). */
  "unprovisioned",
  "provisioning",
  "running",
  "stopping",
  "stopped",
  "deleting",
  "deleted",
  "failed",
] as const;
export type ComputerState = (typeof COMPUTER_STATES)[number];

export const OPERATION_KINDS = [
  "provision",
  "stop",
  "delete",
  "update",
  "recover",
  "checkpoint",
  "idle_shutdown",
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export const OPERATION_STATUSES = [
  "queued",
  "running",
  "succeeded",
  "failed",
  "interrupted",
  "released",
] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const RUN_STATUSES = [
  "queued",
  "running",
  "waiting_takeover",
  /** A mutating tool call waits for a person's approval (BRW-8, the mutation guard's `ask`). */
  "waiting_approval",
  "completed",
  "failed",
  "canceled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What the mutation guard does with a bot's mutating tool call (BRW-8). */
export const MUTATION_MODES = ["allow", "ask", "deny"] as const;
export type MutationMode = (typeof MUTATION_MODES)[number];

/** The mutating tools the guard sees (every one goes through `beforeMutation`). */
export const GUARDED_TOOLS = [
  "computer_act",
  "shell",
  "write_file",
  "attach_file",
  "open_path",
  "launch_app",
  "browser_navigate",
  "browser_act",
] as const;
export type GuardedTool = (typeof GUARDED_TOOLS)[number];

/**
 * A bot's mutation policy as stored: `mode` for every mutating tool, a per-tool `tools` rule
 * over it, and for `browser_navigate` per-domain rules over both (a domain matches itself and
 * its subdomains; the longest match wins).
 */
export interface MutationPolicy {
  readonly mode: MutationMode;
  readonly tools?: Readonly<Partial<Record<GuardedTool, MutationMode>>>;
  readonly domains?: readonly { readonly domain: string; readonly mode: MutationMode }[];
}

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired", "canceled"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
