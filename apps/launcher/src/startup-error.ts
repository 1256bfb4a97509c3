/** A start-up check that failed for a reason the user can fix; printed without a stack trace. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}
