/**
 * Browser profiles are keyed to the bot, never to the slot (CMP-2): the directory name is a pure
 * function of the botId. It must be one safe path segment and injective, so two bots never share
 * a profile and a hostile id ("../x", "a/b", "") can never escape `.browser-profiles/`.
 */
import { createHash } from "node:crypto";
import path from "node:path";

const KEEP = /[A-Za-z0-9-]/;
/** Names longer than this are replaced by a hash (a segment may be at most 255 bytes). */
const MAX_ENCODED = 180;

/**
 * `bot-` + the id with every byte outside [A-Za-z0-9-] written as `_xx` (hex of the UTF-8 byte).
 * `_` itself is escaped, so decoding is unambiguous and the map is injective. Ids whose encoding
 * is too long become `bot.sha256-<hex>`; the `.` never appears in the encoded form, so the two
 * forms cannot collide.
 */
export function profileDirName(botId: string): string {
  if (botId.length === 0) throw new Error("botId must not be empty");
  let encoded = "";
  for (const char of botId) {
    if (KEEP.test(char)) {
      encoded += char;
    } else {
      for (const byte of Buffer.from(char, "utf8")) encoded += `_${byte.toString(16).padStart(2, "0")}`;
    }
    if (encoded.length > MAX_ENCODED) break;
  }
  if (encoded.length > MAX_ENCODED) {
    return `bot.sha256-${createHash("sha256").update(botId, "utf8").digest("hex")}`;
  }
  return `bot-${encoded}`;
}

export function profileDir(workspace: string, botId: string): string {
  return path.join(workspace, ".browser-profiles", profileDirName(botId));
}
