import type { ProviderSettings } from "@rakazo/config";
import { createProvider, type SandboxProvider } from "@rakazo/sandbox";

/** A provider from its settings, or the one a caller built (tests, the operator's move command). */
export function buildProvider(provider: ProviderSettings | SandboxProvider): Promise<SandboxProvider> {
  return "sandbox" in provider ? Promise.resolve(provider) : createProvider(provider);
}
