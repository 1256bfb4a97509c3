/**
 * Handing a computer's gateway its derived keys (SCR-5), once per machine as this process
 * knows it, instead of on every mint.
 *
 * `screens.configure` is a call into the computer. `computer/screenUrl` and
 * `computer/terminalUrl` make it only when this process has not yet configured the machine
 * serving the computer now: remembered by the computer's id and the provider's ref for that
 * machine, per keyring. What must stay true:
 * - A new machine is configured on its next mint: a replacement (restore, update, a machine
 *   gone missing) has a new ref, and the ref is part of what is remembered.
 * - A new keyring is configured on each computer's next mint: the memory is per keyring
 *   object, and the keyring is parsed once per process (a rotation restarts the process), so
 *   the gateway is handed exactly the current derived keys and stops trusting removed ones.
 * - What this memory cannot see — a gateway that lost its keys with its run directory, or was
 *   configured since by a replica holding another keyring — the authority catches:
 *   `authorizeScreen` seals the gateway ticket itself, so a refusal for a key reason
 *   (`STALE_GATEWAY_REASONS`) means the gateway's keys are not ours; it reconfigures once and
 *   asks again. Configuring is idempotent, so replicas each keeping their own memory is fine.
 */
import type { SandboxScreens } from "@rakazo/sandbox";
import { gatewayKeysFor, type ScreenKeyring } from "@rakazo/screens";
import { viaProvider } from "../sandbox-errors.ts";
import type { ScreenServiceConfig } from "./config.ts";

/** The gateway's refusals of a ticket we just sealed that mean its keys are not the current ones. */
export const STALE_GATEWAY_REASONS: ReadonlySet<string> = new Set([
  "not_configured",
  "unknown_key",
  "forged",
  "wrong_computer",
]);

/** Computers remembered per keyring; beyond this the oldest is forgotten (it is configured again). */
const MAX_REMEMBERED = 10_000;

/** Per keyring: computer id → the provider ref of the machine this process configured. */
const configured = new WeakMap<ScreenKeyring, Map<string, string>>();

function memoryOf(keyring: ScreenKeyring): Map<string, string> {
  let memory = configured.get(keyring);
  if (!memory) {
    memory = new Map();
    configured.set(keyring, memory);
  }
  return memory;
}

/** The machine serving a computer now, as the computers row names it. */
export interface GatewayMachine {
  readonly computerId: string;
  readonly providerRef: string;
}

/** Configures the machine's gateway with the current derived keys, and remembers it. */
export async function configureGateway(
  config: ScreenServiceConfig,
  screens: SandboxScreens,
  machine: GatewayMachine,
): Promise<void> {
  await viaProvider(() => screens.configure(gatewayKeysFor(config.keyring, machine.computerId)));
  const memory = memoryOf(config.keyring);
  memory.delete(machine.computerId);
  if (memory.size >= MAX_REMEMBERED) {
    const oldest = memory.keys().next().value;
    if (oldest !== undefined) memory.delete(oldest);
  }
  memory.set(machine.computerId, machine.providerRef);
}

/** Configures the gateway unless this process already did for this machine and keyring. */
export async function ensureGatewayConfigured(
  config: ScreenServiceConfig,
  screens: SandboxScreens,
  machine: GatewayMachine,
): Promise<void> {
  if (memoryOf(config.keyring).get(machine.computerId) === machine.providerRef) return;
  await configureGateway(config, screens, machine);
}
