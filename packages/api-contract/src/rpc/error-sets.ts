/**
 * Error sets several RPCs share because their work runs through the same code (a test holds each
 * RPC's list to the codes its handler reaches: tests/api/rpc-error-codes.test.ts). An RPC whose
 * reach changes gets a list of its own.
 */

/** A lifecycle change of a computer (stop, start, delete, update, recover, external destroy). */
export const LIFECYCLE_ERRORS = ["CONFLICT", "NOT_FOUND", "OPERATION_IN_PROGRESS", "QUOTA_EXCEEDED"] as const;

/** A call on a bot's desktop or browser (observe, act, page tools), user or external. */
export const DESKTOP_ERRORS = [
  "COMPUTER_GONE",
  "COMPUTER_NOT_READY",
  "DESKTOP_UNAVAILABLE",
  "FILE_NOT_FOUND",
  "FILE_TOO_LARGE",
  "HUMAN_IN_CONTROL",
  "INVALID_PATH",
  "LEASE_HELD",
  "MULTI_SCREEN_UNAVAILABLE",
  "NOT_FOUND",
  "NOT_IN_CONTROL",
  "PROCESS_LIMIT",
  "PROVIDER_ERROR",
  "QUOTA_EXCEEDED",
  "STALE_LEASE",
  "UNSUPPORTED",
] as const;

/** An external call into the computer's machine (files, background commands). */
export const EXTERNAL_MACHINE_ERRORS = [
  "COMPUTER_GONE",
  "COMPUTER_NOT_READY",
  "DESKTOP_UNAVAILABLE",
  "FILE_NOT_FOUND",
  "FILE_TOO_LARGE",
  "INVALID_PATH",
  "MULTI_SCREEN_UNAVAILABLE",
  "NOT_FOUND",
  "PROCESS_LIMIT",
  "PROVIDER_ERROR",
  "QUOTA_EXCEEDED",
  "UNSUPPORTED",
] as const;

/** A person's call that needs the machine up and the bot's control lease (screen and terminal URLs, uploads, writes, release). */
export const CONTROLLED_MACHINE_ERRORS = [
  "COMPUTER_GONE",
  "COMPUTER_NOT_READY",
  "DESKTOP_UNAVAILABLE",
  "FILE_NOT_FOUND",
  "FILE_TOO_LARGE",
  "INVALID_PATH",
  "MULTI_SCREEN_UNAVAILABLE",
  "NOT_FOUND",
  "NOT_IN_CONTROL",
  "PROCESS_LIMIT",
  "PROVIDER_ERROR",
  "UNSUPPORTED",
] as const;
