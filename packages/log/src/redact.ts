/**
 * Secret redaction for anything logged or stored: values under secret-looking keys, and
 * secret-shaped substrings anywhere (Rakazo tokens, bearer credentials, URL passwords).
 */
const SECRET_KEY = /(authorization|cookie|token|secret|password|passwd|api[-_]?key|credential|capability)/i;

const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [/\brkz_[A-Za-z0-9]{8,}/g, "rkz_[REDACTED]"],
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{4,}/gi, "$1 [REDACTED]"],
  [/(\b[a-z][a-z0-9+.-]*:\/\/)([^\s/:@]+):([^\s/@]+)@/gi, "$1$2:[REDACTED]@"],
  [/([?&](?:token|access_token|key|secret|password|sig|signature)=)[^&\s#"']+/gi, "$1[REDACTED]"],
];

export const REDACTED = "[REDACTED]";

export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object" || depth > 8) return value;
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message), code: (value as { code?: unknown }).code };
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) && v !== null && v !== undefined ? REDACTED : redactValue(v, depth + 1);
  }
  return out;
}
