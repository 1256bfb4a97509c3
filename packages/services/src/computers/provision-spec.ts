/**
 * What the provider is asked for when a computer's machine is brought up — by create, start,
 * update, recovery or replacement. Every property of the computer that shapes its machine
 * (mode, workspace, size, network policy) is read here from the stored row, so no path can
 * bring a computer back without one of them.
 */
import type { ProvisionRequest } from "@rakazo/sandbox";
import type { ComputerRow } from "./access.ts";
import { networkOf } from "./network.ts";
import { sizingOf } from "./sizing.ts";

/** The provision request for `computer`; `ref` is the machine to reconnect, null for a new one. */
export function provisionRequestOf(computer: ComputerRow, ref: string | null): ProvisionRequest {
  return {
    computerId: computer.id,
    mode: computer.mode,
    homeKey: computer.homeKey,
    ref,
    sizing: sizingOf(computer),
    network: networkOf(computer),
  };
}
