/**
 * Novita through `novita-sandbox` (an E2B fork; `novita-sandbox/desktop` mirrors `@e2b/desktop`):
 * the family provider bound to its SDK. Differences handled in family.ts and here: `connect`
 * always sends a TTL (300 s unless given — the family backend always gives it), the instance
 * `kill()` returns nothing (the static one is used), errors carry no HTTP status, and an error
 * answer with an empty body counts as success in the SDK, so the emulator
 * always sends one.
 */
import {
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  Sandbox,
  SandboxNotFoundError,
  TimeoutError,
} from "novita-sandbox";
import { Sandbox as DesktopSandbox } from "novita-sandbox/desktop";
import type { SandboxProvider } from "../../provider.ts";
import { createFamilyProvider, type FamilyProviderConfig } from "./binding.ts";

/** `NOVITA_API_KEY`, `NOVITA_API_URL` / `NOVITA_SANDBOX_URL` (an emulator), `NOVITA_PORT_URL`, … */
export type NovitaProviderConfig = FamilyProviderConfig;

export function createNovitaProvider(config: NovitaProviderConfig): SandboxProvider {
  return createFamilyProvider(
    "novita",
    {
      Sandbox,
      DesktopSandbox,
      CommandExitError,
      SandboxNotFoundError,
      FileNotFoundError,
      AuthenticationError,
      TimeoutError,
      status: () => undefined,
    },
    config,
  );
}
