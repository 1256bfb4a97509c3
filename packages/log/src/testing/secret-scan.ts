/**
 * Checks that no secret a test used reaches a log line (security.md: no token, capability or
 * secret in a log line). Fixtures register the secrets they create or see (tokens, screen
 * capabilities, tickets, master keys); the integration project's setup file listens to every
 * line any logger writes and, after each test file, fails it when a registered secret appears.
 */
import { onLogLine } from "../logger.ts";

const secrets = new Map<string, string>();
const lines: string[] = [];
let stopListening: (() => void) | undefined;

// Shorter values would match by accident (ids, words); every real secret here is longer.
const MIN_SECRET_LENGTH = 12;
const SECRET_SHAPES = [/\brkz_[A-Za-z0-9]{8,}/g, /\brs1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{16,}/g];
const SECRET_KEYS = /^(token|secret|ticket|password|capability|key|masterKey|serviceToken)$/i;

/** Remembers a secret value; `label` says in a failure what it was (never the value itself). */
export function registerLogSecret(value: string | undefined, label: string): void {
  if (value && value.length >= MIN_SECRET_LENGTH) secrets.set(value, label);
}

/** Registers every secret-shaped string in an API answer (tokens, capability URLs, tickets). */
export function registerSecretsIn(value: unknown, depth = 0): void {
  if (typeof value === "string") {
    for (const shape of SECRET_SHAPES)
      for (const match of value.matchAll(shape)) registerLogSecret(match[0], "secret in an API answer");
    return;
  }
  if (value === null || typeof value !== "object" || depth > 10) return;
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === "string" && SECRET_KEYS.test(key)) registerLogSecret(v, `field ${key} of an API answer`);
    registerSecretsIn(v, depth + 1);
  }
}

/** Starts collecting every log line of this test file, forgetting the previous file's. */
export function startLogSecretScan(): void {
  stopListening?.();
  secrets.clear();
  lines.length = 0;
  stopListening = onLogLine((line) => lines.push(line));
}

/** The registered secrets that appear in a collected line: label and the line, value cut out. */
export function leakedSecrets(): { label: string; line: string }[] {
  const found: { label: string; line: string }[] = [];
  for (const [value, label] of secrets) {
    const line = lines.find((l) => l.includes(value));
    if (line) found.push({ label, line: line.replaceAll(value, "<the secret>").slice(0, 500) });
  }
  return found;
}

/** Throws when any registered secret was logged; call after a test file. */
export function assertNoSecretLogged(): void {
  const found = leakedSecrets();
  stopListening?.();
  stopListening = undefined;
  if (found.length === 0) return;
  const details = found.map((f) => `- ${f.label}: ${f.line}`).join("\n");
  throw new Error(`${found.length} secret(s) reached a log line:\n${details}`);
}

/** How many lines and secrets the scan holds (so a test can see it is really running). */
export function logSecretScanState(): { lines: number; secrets: number } {
  return { lines: lines.length, secrets: secrets.size };
}
