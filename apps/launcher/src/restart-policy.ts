/**
 * When a crashed child comes back: after a delay that doubles with each crash in the window
 * (0.5 s, 1 s, 2 s, … capped), or never, when it crashed too often in a short window — a
 * process that dies at once on every start is broken, and restarting it forever hides that.
 */
export interface RestartPolicy {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** Crashes inside this window count towards giving up. */
  readonly windowMs: number;
  /** This many crashes inside the window stop the system. */
  readonly maxCrashes: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  firstDelayMs: 500,
  maxDelayMs: 10_000,
  windowMs: 60_000,
  maxCrashes: 5,
};

export type RestartDecision =
  | { readonly restart: true; readonly delayMs: number; readonly crashesInWindow: number }
  | { readonly restart: false; readonly crashesInWindow: number };

/** Records a crash at `now` in `crashes` (pruned to the window) and decides. */
export function decideRestart(crashes: number[], now: number, policy: RestartPolicy): RestartDecision {
  crashes.push(now);
  while (crashes.length > 0 && (crashes[0] ?? now) <= now - policy.windowMs) crashes.shift();
  const count = crashes.length;
  if (count >= policy.maxCrashes) return { restart: false, crashesInWindow: count };
  const delayMs = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (count - 1));
  return { restart: true, delayMs, crashesInWindow: count };
}
