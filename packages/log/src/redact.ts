/**
 * Secret redaction for anything logged or stored: values under secret-looking keys, and
 * secret-shaped substrings anywhere (Rakazo tokens, bearer credentials, URL passwords).
 */
const SECRET_KEY = /(authorization|cookie|token|secret|password|passwd|api[-_]?key|credential|capability)/i;

// Order matters: whole header values go first, so "Authorization: Bearer x" loses all of "Bearer x".
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [
    /\b(authorization|proxy-authorization|x-api-key|api-key|x-auth-token|cookie|set-cookie)(\s*:\s*)[^"'\r\n]+/gi,
    "$1$2[REDACTED]",
  ],
  [/\brkz_[A-Za-z0-9]{8,}/g, "rkz_[REDACTED]"],
  // Well-known credential shapes: GitHub, OpenAI-style, Slack, AWS access keys, JWTs.
  [/\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{10,}/g, "$1[REDACTED]"],
  [/\b(sk-(?:or-|proj-|ant-)?)[A-Za-z0-9_-]{16,}/g, "$1[REDACTED]"],
  [/\b(xox[abposr]-)[A-Za-z0-9-]{8,}/g, "$1[REDACTED]"],
  [/\bAKIA[0-9A-Z]{16}\b/g, "AKIA[REDACTED]"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, "[REDACTED]"],
  // Secret-named variables and flags in command lines: API_TOKEN=x, --password x, -p=x is left.
  [
    /\b([A-Za-z0-9_]*(?:token|secret|passw(?:or)?d|api_?key|credentials?)[A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s&;|]+)/gi,
    "$1=[REDACTED]",
  ],
  [
    /(--?(?:password|passwd|token|secret|api-key|apikey|auth-token)(?:=|\s+))("[^"]*"|'[^']*'|\S+)/gi,
    "$1[REDACTED]",
  ],
  // curl -u user:password / --user user:password
  [/((?:^|\s)(?:-u|--user)\s+)("?)([^\s:"]+):([^\s"]+)/g, "$1$2$3:[REDACTED]"],
  // Auth schemes outside a header line. Case-sensitive "Basic"/"Token" so prose ("token issued")
  // survives; header lines ("authorization: token x") are caught whole above.
  [/\b([Bb]earer|BEARER|Basic|Token)\s+[A-Za-z0-9._~+/=-]{4,}/g, "$1 [REDACTED]"],
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
