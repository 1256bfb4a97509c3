/**
 * Identity is derived, not remembered: the computer key and the screen identity a
 * caller gets are a pure function of its scope, so a restarted bridge or harness finds the same
 * computer again from the scope alone — no state file, no lease, no heartbeat.
 *
 * - default: one computer per conversation (`conversation:<id>`), one screen on it;
 * - `share: true`: the Team root's computer (`team:<root>`), one screen per conversation;
 * - `account: <name>`: one long-lived computer and screen for every conversation naming it.
 *
 * Each step gives up isolation for continuity; a shared computer is not a security boundary.
 *
 * All of it is within one client (clients.ts): a named client's keys and screens carry the
 * prefix `client:<name>/`, so no scope of one client names another's computer. The client
 * `default` (BRIDGE_TOKEN) keeps the bare names computers had before clients existed; a named
 * client's key always starts with `client:` and a bare one never does, so the two never meet.
 *
 * The whole scheme is `[<keyPrefix>][client:<name>/]<kind>:<name>`: the operator's key prefix
 * (BRIDGE_KEY_PREFIX, default none: the keys computers always had) sets one bridge's computers
 * apart from another's on the same API. A prefix ends in `/` and has no `:`, so no prefixed key
 * is ever a bare or `client:` key of an unprefixed bridge.
 */
import { BRIDGE_DEFAULT_CLIENT } from "@rakazo/config";
import { z } from "zod";
import { BridgeError } from "./errors.ts";

const name = z
  .string()
  .min(1)
  .max(160)
  .regex(/^[^\p{Cc}]+$/u, "expected printable text");

export const scopeSchema = z.strictObject({
  conversationId: name,
  teamRoot: name.optional(),
  share: z.boolean().optional(),
  account: name.optional(),
});
export type Scope = z.infer<typeof scopeSchema>;

export interface Identity {
  /** The API's computer key. */
  readonly key: string;
  /** The API's screen identity on that computer. */
  readonly screen: string;
}

/** The API's limit on a key or screen name. */
const API_NAME_MAX = 200;

/** The identity `scope` names within `client`'s namespace, behind the bridge's `keyPrefix`. */
export function identityOf(scope: Scope, client: string, keyPrefix = ""): Identity {
  const prefix = keyPrefix + (client === BRIDGE_DEFAULT_CLIENT ? "" : `client:${client}/`);
  const { key, screen } = bareIdentityOf(scope);
  const identity = { key: `${prefix}${key}`, screen: `${prefix}${screen}` };
  // Refused here rather than by the API, whose message would name a key the caller never wrote.
  if (identity.key.length > API_NAME_MAX || identity.screen.length > API_NAME_MAX) {
    throw new BridgeError("INVALID_INPUT", "the scope's names are too long for a computer key or screen");
  }
  return identity;
}

function bareIdentityOf(scope: Scope): Identity {
  if (scope.account !== undefined) {
    if (scope.share) throw new BridgeError("INVALID_INPUT", "account and share are exclusive");
    return { key: `account:${scope.account}`, screen: `account:${scope.account}` };
  }
  if (scope.share) {
    // The guard: sharing needs a stated Team root. Without one there is nothing to share, and
    // falling back to any other name would put unrelated conversations on one computer.
    if (scope.teamRoot === undefined) throw new BridgeError("INVALID_INPUT", "share: true needs teamRoot");
    return {
      key: `team:${scope.teamRoot}`,
      screen: `team:${scope.teamRoot}/conversation:${scope.conversationId}`,
    };
  }
  // Default: the conversation alone, whatever Team it belongs to.
  return { key: `conversation:${scope.conversationId}`, screen: `conversation:${scope.conversationId}` };
}
