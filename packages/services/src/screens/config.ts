import type { ScreenKeyring } from "@rakazo/screens";

export interface ScreenServiceConfig {
  readonly keyring: ScreenKeyring;
  /** The web service as browsers reach it, e.g. `https://screens.example.com` (no trailing slash). */
  readonly webBaseUrl: string;
  /** Capability lifetime when the caller names none; default 15 minutes (never above the max). */
  readonly ttlMs?: number;
  /** The longest lifetime a caller may ask for (`ttlSeconds`); default 24 hours. */
  readonly maxTtlMs?: number;
}

export const DEFAULT_SCREEN_TTL_MS = 15 * 60_000;
export const DEFAULT_MAX_SCREEN_TTL_MS = 24 * 3_600_000;
