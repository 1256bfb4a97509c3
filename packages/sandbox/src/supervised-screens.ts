/**
 * `SandboxScreens` over the in-computer supervisor's screen gateway (SCR-1): the same for every
 * provider; a provider supplies the transport and how the web service reaches the gateway.
 */
import { SandboxError } from "./errors.ts";
import type { SandboxScreens, ScreenGatewayTarget } from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

export function createSupervisedScreens(
  transport: SupervisorTransport,
  target: () => Promise<ScreenGatewayTarget>,
): SandboxScreens {
  return {
    async configure(config) {
      await transport.call("screens.configure", config);
    },
    async revoke(rules) {
      const result = (await transport.call("screens.revoke", { rules })) as { closed?: unknown };
      return { closed: typeof result?.closed === "number" ? result.closed : 0 };
    },
    async check(ticket) {
      const result = (await transport.call("screens.check", { ticket })) as {
        ok?: unknown;
        reason?: unknown;
      };
      if (result?.ok === true) return { ok: true };
      if (result?.ok === false && typeof result.reason === "string")
        return { ok: false, reason: result.reason };
      throw new SandboxError("SANDBOX_PROVIDER_ERROR", "screens.check: malformed supervisor result");
    },
    target,
  };
}
