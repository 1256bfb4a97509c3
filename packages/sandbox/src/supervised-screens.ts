/**
 * `SandboxScreens` over the in-computer supervisor's screen gateway (SCR-1): the same for every
 * provider; a provider supplies the transport and how the web service reaches the gateway.
 */
import type { SandboxScreens, ScreenGatewayTarget } from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

export function createSupervisedScreens(
  transport: SupervisorTransport,
  target: () => Promise<ScreenGatewayTarget>,
): SandboxScreens {
  return {
    async configure(config) {
      await transport.call("screens.configure", { computerId: config.computerId, keys: [...config.keys] });
    },
    async revoke(rules) {
      const { closed } = await transport.call("screens.revoke", { rules: [...rules] });
      return { closed };
    },
    async check(ticket) {
      const result = await transport.call("screens.check", { ticket });
      return result.ok ? { ok: true } : { ok: false, reason: result.reason };
    },
    target,
  };
}
