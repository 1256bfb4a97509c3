import { randomBytes } from "node:crypto";

/** Every row id carries its kind, so a log line or an error names what it refers to. */
export const ID_PREFIXES = {
  user: "usr",
  space: "spc",
  bot: "bot",
  computer: "cmp",
  operation: "op",
  run: "run",
  token: "tok",
  event: "evt",
  worker: "wrk",
  attachment: "att",
  invite: "inv",
  approval: "apr",
  runEvent: "rev",
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** `cmp_` + 20 base-36 characters from 128 random bits (ids are not secrets, but not guessable). */
export function newId(kind: IdKind): string {
  const bytes = randomBytes(20);
  let body = "";
  for (const byte of bytes) body += ALPHABET[byte % 36];
  return `${ID_PREFIXES[kind]}_${body}`;
}

export function hasIdPrefix(kind: IdKind, id: string): boolean {
  return id.startsWith(`${ID_PREFIXES[kind]}_`);
}
