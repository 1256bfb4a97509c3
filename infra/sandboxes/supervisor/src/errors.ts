/**
 * The error every supervisor method fails with: a stable `code` the host maps to its own errors
 * (`INVALID_ACTION`, `DESKTOP_UNAVAILABLE`, `MULTI_SCREEN_UNAVAILABLE`, …), a message, and
 * optional details. The RPC server answers it as `{ok:false,error:{code,message,details}}`.
 */
export class SupervisorError extends Error {
  readonly code: string;
  /** Machine-readable context for the caller (e.g. `reason` of a refusal); never secrets. */
  readonly details: Record<string, unknown> | undefined;
  override readonly name = "SupervisorError";
  constructor(code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.details = details;
  }
}
