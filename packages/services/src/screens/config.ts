import type { ScreenKeyring } from "@rakazo/screens";

export interface ScreenServiceConfig {
  readonly keyring: ScreenKeyring;
  /** The web service as browsers reach it, e.g. `https://screens.example.com` (no trailing slash). */
  readonly webBaseUrl: string;
  /** Capability lifetime; default 15 minutes. */
  readonly ttlMs?: number;
}
