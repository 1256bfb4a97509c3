/**
 * Secret redaction for anything logged or stored: values under secret-looking keys, and
 * secret-shaped substrings anywhere (Rakazo tokens, bearer credentials, URL passwords).
 */
const SECRET_KEY =
  /(authorization|cookie|token|secret|password|passwd|api[-_]?key|credential|capability|ticket|^keys?$|(master|private|signing|encryption)[-_]?keys?)/i;
// Identifiers of secrets are not secrets: `tokenId`, `capabilityId`, `screen.capability_id`,
// `tokenIds` stay readable (their values still pass through the text patterns).
const ID_KEY = /(?:[a-z0-9]Ids?|[._-]ids?)$/;

// Order matters: whole header values go first, so "Authorization: Bearer x" loses all of "Bearer x".
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [
    /\b(authorization|proxy-authorization|x-api-key|api-key|x-auth-token|cookie|set-cookie|x-rakazo-screen-ticket|x-access-token|e2b-traffic-access-token|x-daytona-preview-token)(\s*:\s*)[^"'\r\n]+/gi,
    "$1$2[REDACTED]",
  ],
  [/\brkz_[A-Za-z0-9]{8,}/g, "rkz_[REDACTED]"],
  // Screen capabilities and gateway tickets (`rs1.<kid>.<sealed>`): the key id stays readable.
  [/\brs1\.([A-Za-z0-9_-]{1,32})\.[A-Za-z0-9_-]{16,}/g, "rs1.$1.[REDACTED]"],
  // Well-known credential shapes: GitHub, OpenAI-style, Slack, AWS access keys, JWTs.
  [/\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{10,}/g, "$1[REDACTED]"],
  [/\b(sk-(?:or-|proj-|ant-)?)[A-Za-z0-9_-]{16,}/g, "$1[REDACTED]"],
  [/\b(xox[abposr]-)[A-Za-z0-9-]{8,}/g, "$1[REDACTED]"],
  [/\bAKIA[0-9A-Z]{16}\b/g, "AKIA[REDACTED]"],
  // Cloud sandbox keys: E2B (`e2b_`), Daytona (`dtn_`), Novita (`sk_`).
  [/\b(e2b_|dtn_|sk_)[A-Za-z0-9]{16,}/g, "$1[REDACTED]"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, "[REDACTED]"],
  // Secret-named variables and flags in command lines: API_TOKEN=x, --password x, -p=x is left.
  [
    /\b([A-Za-z0-9_]*(?:token|secret|passw(?:or)?d|api_?key|credentials?|_keys?\b)[A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s&;|]+)/gi,
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
  [/([?&](?:_token|token|access_token|key|secret|password|sig|signature)=)[^&\s#"']+/gi, "$1[REDACTED]"],
];

export const REDACTED = "[REDACTED]";

/**
 * Every pattern at once, case-insensitive, without replacing: it matches wherever any pattern
 * would (the same alternatives, only looser about case), so a text it misses has nothing to
 * redact. Most logged strings are such (ids, paths, method names): one scan instead of one per
 * pattern.
 */
const ANY_SECRET = new RegExp(SECRET_PATTERNS.map(([pattern]) => `(?:${pattern.source})`).join("|"), "i");

export function redactText(text: string): string {
  if (!ANY_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  // Past this depth nothing is inspected, so nothing is passed on either.
  if (depth > 8) return "[TOO DEEP]";
  if (value instanceof Error) return redactError(value, depth);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const secret = SECRET_KEY.test(key) && !ID_KEY.test(key);
    out[key] = secret && v !== null && v !== undefined ? REDACTED : redactValue(v, depth + 1);
  }
  return out;
}

/** An error as a plain object that keeps what debugging needs: stack, code and the cause chain. */
function redactError(error: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { name: error.name, message: redactText(error.message) };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  if (error.stack) out.stack = redactText(error.stack);
  if (error.cause !== undefined) out.cause = redactValue(error.cause, depth + 1);
  if (error instanceof AggregateError) out.errors = redactValue(error.errors, depth + 1);
  return out;
}
