/**
 * A computer's network policy: set at create, changed by a member of its space while
 * no machine runs (`computer/setNetwork`), applied by the provider at the next provision. A
 * policy the provider cannot enforce is refused with `UNSUPPORTED`, never stored and ignored.
 */
import { computers } from "@rakazo/db";
import { NETWORK_MODES, type NetworkPolicy, type SandboxProvider } from "@rakazo/sandbox";
import { and, eq, inArray } from "drizzle-orm";
import type { Caller, ServiceContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { type ComputerRow, requireComputer } from "./access.ts";
import { type ComputerView, toComputerView } from "./view.ts";

/** States in which no machine runs, so a new policy cannot meet a live one. */
export const NETWORK_CHANGE_STATES = ["unprovisioned", "stopped", "failed"] as const;

export const NO_NETWORK_POLICY: NetworkPolicy = { mode: "none" };

/** The policy a computer runs under; null on computers made before policies existed: `none`. */
export function networkOf(row: Pick<ComputerRow, "network">): NetworkPolicy {
  return row.network ?? NO_NETWORK_POLICY;
}

/** The row's JSON form of a (normalized) policy. */
export function storedPolicy(policy: NetworkPolicy): NonNullable<ComputerRow["network"]> {
  return {
    mode: policy.mode,
    ...(policy.allow
      ? { allow: policy.allow.map((e) => ({ host: e.host, ...(e.ports ? { ports: [...e.ports] } : {}) })) }
      : {}),
  };
}

/** Lowercased hosts, sorted unique ports; `allow` only under allowlist. */
export function normalizePolicy(policy: NetworkPolicy): NetworkPolicy {
  if (!NETWORK_MODES.includes(policy.mode))
    throw new AppError("INVALID_INPUT", `unknown network mode ${policy.mode}`);
  if (policy.mode !== "allowlist") {
    if (policy.allow && policy.allow.length > 0) {
      throw new AppError("INVALID_INPUT", `network.allow is only for mode allowlist, not ${policy.mode}`);
    }
    return { mode: policy.mode };
  }
  return {
    mode: "allowlist",
    allow: (policy.allow ?? []).map((entry) => ({
      host: entry.host.trim().toLowerCase().replace(/\.$/, ""),
      ...(entry.ports ? { ports: [...new Set(entry.ports)].sort((a, b) => a - b) } : {}),
    })),
  };
}

export function requireSupportedPolicy(
  provider: Pick<SandboxProvider, "kind" | "capabilities">,
  policy: NetworkPolicy,
): void {
  const modes = provider.capabilities.networkModes ?? ["none"];
  if (!modes.includes(policy.mode)) {
    throw new AppError(
      "UNSUPPORTED",
      `the ${provider.kind} provider cannot enforce network mode ${policy.mode}`,
      {
        mode: policy.mode,
        supported: [...modes],
      },
    );
  }
}

/** The policy a new computer gets: the caller's, else the deployment's default. */
export function resolveCreatePolicy(
  ctx: {
    readonly provider: Pick<SandboxProvider, "kind" | "capabilities">;
    readonly networkDefault?: NetworkPolicy | undefined;
  },
  requested?: NetworkPolicy,
): NetworkPolicy {
  const policy = normalizePolicy(requested ?? ctx.networkDefault ?? NO_NETWORK_POLICY);
  requireSupportedPolicy(ctx.provider, policy);
  return policy;
}

export async function setComputerNetwork(
  ctx: ServiceContext,
  caller: Caller,
  input: { computerId: string; network: NetworkPolicy },
): Promise<ComputerView> {
  const current = await requireComputer(ctx, caller, input.computerId);
  const policy = normalizePolicy(input.network);
  requireSupportedPolicy(ctx.provider, policy);
  // Conditional: a start racing this change either sees the new policy or makes this fail.
  const [row] = await ctx.db
    .update(computers)
    .set({ network: storedPolicy(policy) })
    .where(and(eq(computers.id, input.computerId), inArray(computers.state, [...NETWORK_CHANGE_STATES])))
    .returning();
  if (!row) {
    throw new AppError("CONFLICT", `stop the computer before changing its network (it is ${current.state})`, {
      state: current.state,
    });
  }
  ctx.log.info("computer.network_changed", { computerId: row.id, mode: policy.mode });
  return toComputerView(row);
}
