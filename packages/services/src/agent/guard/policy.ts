/**
 * The mutation guard's rules (BRW-8): which mode a bot's policy gives one mutating tool call.
 * Pure, so the matching is tested without a database (./policy.test.ts).
 *
 * Precedence, most specific first: for `browser_navigate`, a domain rule matching the URL's host
 * (the longest domain wins; `example.test` matches `example.test` and `a.example.test`), then the
 * tool's rule, then the policy's `mode`. A URL that does not parse matches no domain rule.
 */
import { GUARDED_TOOLS, type GuardedTool, type MutationMode, type MutationPolicy } from "@rakazo/db";

export interface GuardDecision {
  readonly mode: MutationMode;
  /** The rule that decided, in words for Activity: `domain example.test`, `tool shell`, `default`. */
  readonly rule: string;
}

export const ALLOW_ALL: MutationPolicy = { mode: "allow" };

export function isGuardedTool(tool: string): tool is GuardedTool {
  return (GUARDED_TOOLS as readonly string[]).includes(tool);
}

/** The host of a navigation target, lower-case, or undefined when the URL does not parse. */
export function hostOf(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host.startsWith("[") ? host : host.replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

/** A domain rule's domain in the form matching uses (lower-case, no leading `*.` or dot). */
export function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/^\*\./, "").replace(/^\./, "").replace(/\.$/, "");
}

export function domainMatches(domain: string, host: string): boolean {
  const d = normalizeDomain(domain);
  return d !== "" && (host === d || host.endsWith(`.${d}`));
}

export function decide(policy: MutationPolicy, tool: string, args: unknown): GuardDecision {
  if (tool === "browser_navigate" && policy.domains?.length) {
    const host = hostOf((args as { url?: unknown } | null)?.url);
    if (host !== undefined) {
      const matching = policy.domains
        .filter((rule) => domainMatches(rule.domain, host))
        .sort((a, b) => normalizeDomain(b.domain).length - normalizeDomain(a.domain).length);
      const rule = matching[0];
      if (rule) return { mode: rule.mode, rule: `domain ${normalizeDomain(rule.domain)}` };
    }
  }
  const toolMode = isGuardedTool(tool) ? policy.tools?.[tool] : undefined;
  if (toolMode) return { mode: toolMode, rule: `tool ${tool}` };
  return { mode: policy.mode, rule: "default" };
}

/** The stored form of a policy: domains normalized and de-duplicated (the last rule wins). */
export function normalizeMutationPolicy(policy: MutationPolicy): MutationPolicy {
  const domains = new Map<string, MutationMode>();
  for (const rule of policy.domains ?? []) {
    const domain = normalizeDomain(rule.domain);
    if (domain) domains.set(domain, rule.mode);
  }
  const tools = Object.fromEntries(
    Object.entries(policy.tools ?? {}).filter(([tool, mode]) => isGuardedTool(tool) && mode),
  ) as Partial<Record<GuardedTool, MutationMode>>;
  return {
    mode: policy.mode,
    ...(Object.keys(tools).length ? { tools } : {}),
    ...(domains.size ? { domains: [...domains].map(([domain, mode]) => ({ domain, mode })) } : {}),
  };
}
