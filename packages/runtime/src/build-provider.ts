import type { ProviderSettings } from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import { createProvider, type ProviderEventLog, type SandboxProvider } from "@rakazo/sandbox";

/**
 * A provider's events as the process's log lines (JSON, redacted by @rakazo/log): the event
 * name is the message, the rest its fields; refusals (`*.refused`, e.g. `docker.socket.refused`)
 * and a feature the settings asked for that this host cannot give (`*.unavailable`, e.g.
 * `docker.home_disks.unavailable`) are warnings, everything else is info.
 */
function providerEventLog(log: Logger): ProviderEventLog {
  return ({ event, ...fields }) => {
    if (event.endsWith(".refused") || event.endsWith(".unavailable")) log.warn(event, fields);
    else log.info(event, fields);
  };
}

/**
 * A provider from its settings, its events written to `log`; or the one a caller built (tests,
 * the operator's move command), which logs wherever its builder wired it.
 */
export function buildProvider(
  provider: ProviderSettings | SandboxProvider,
  log: Logger,
  options: { readonly repairs?: boolean } = {},
): Promise<SandboxProvider> {
  return "sandbox" in provider
    ? Promise.resolve(provider)
    : createProvider(provider, { log: providerEventLog(log), ...options });
}
