/**
 * E2B through `@e2b/desktop` (its `Sandbox` extends e2b's): the family provider bound to the e2b
 * SDK. Machines are made with e2b's plain `Sandbox.create` on the desktop template and
 * reconnected with `@e2b/desktop`'s `Sandbox.connect` (binding.ts). Traffic to hosted ports
 * needs the sandbox's traffic access token (public traffic off), which only the server-side
 * proxy sends (SCR-4).
 */
import {
  AuthenticationError,
  CommandExitError,
  Sandbox as DesktopSandbox,
  SandboxError as E2BSandboxError,
  FileNotFoundError,
  SandboxNotFoundError,
  ServiceBusyError,
  TimeoutError,
} from "@e2b/desktop";
import { Sandbox } from "e2b";
import type { SandboxProvider } from "../../provider.ts";
import { createFamilyProvider, type FamilyProviderConfig } from "./binding.ts";

/** `E2B_API_KEY`, `E2B_API_URL` / `E2B_SANDBOX_URL` (an emulator), `E2B_PORT_URL`, … */
export type E2BProviderConfig = FamilyProviderConfig;

export function createE2BProvider(config: E2BProviderConfig): SandboxProvider {
  return createFamilyProvider(
    "e2b",
    {
      Sandbox,
      DesktopSandbox,
      CommandExitError,
      SandboxNotFoundError,
      FileNotFoundError,
      AuthenticationError,
      TimeoutError,
      status: (error) =>
        error instanceof ServiceBusyError
          ? 503
          : error instanceof E2BSandboxError
            ? error.statusCode
            : undefined,
    },
    config,
  );
}
