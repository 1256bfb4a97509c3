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
  "completed",
  "failed",
  "canceled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
