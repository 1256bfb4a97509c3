/**
 * The proxy's rules as the Docker provider passes them (RAKAZO_EGRESS_RULES, JSON of
 * `EgressRules`), checked before the proxy listens: a missing or malformed value is a clear
 * refusal to start (exit 2 in main.ts), not a JSON stack trace or a proxy that decides on
 * half-read rules. Node builtins only (this folder runs in the proxy container).
 */
import type { EgressRules } from "./decide.ts";

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === "string");

const isPort = (value: unknown): boolean =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535;

/** The rules in `text`, or an Error saying what is wrong with them. */
export function parseEgressRules(text: string | undefined): EgressRules | Error {
  if (!text) return new Error("RAKAZO_EGRESS_RULES is not set");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new Error("RAKAZO_EGRESS_RULES is not JSON");
  }
  const rules = value as Record<string, unknown> | null;
  if (typeof rules !== "object" || rules === null || Array.isArray(rules)) {
    return new Error("RAKAZO_EGRESS_RULES is not an object");
  }
  if (rules.mode !== "egress" && rules.mode !== "allowlist") {
    return new Error('RAKAZO_EGRESS_RULES.mode must be "egress" or "allowlist"');
  }
  for (const field of ["privateAllow", "hostDeny"] as const) {
    if (!isStringList(rules[field]))
      return new Error(`RAKAZO_EGRESS_RULES.${field} must be a list of strings`);
  }
  const allow = rules.allow;
  if (!Array.isArray(allow)) return new Error("RAKAZO_EGRESS_RULES.allow must be a list");
  for (const [index, entry] of allow.entries()) {
    const item = entry as Record<string, unknown> | null;
    if (typeof item !== "object" || item === null || typeof item.host !== "string" || item.host === "") {
      return new Error(`RAKAZO_EGRESS_RULES.allow[${index}].host must be a non-empty string`);
    }
    if (item.ports !== undefined && !(Array.isArray(item.ports) && item.ports.every(isPort))) {
      return new Error(`RAKAZO_EGRESS_RULES.allow[${index}].ports must be a list of ports (1-65535)`);
    }
  }
  return rules as unknown as EgressRules;
}
