/**
 * A space's people: members and their roles, one-time invites, and redeeming one.
 * Roles: `owner` may do everything; `member` everything but the space's people (inviting,
 * removing others, changing roles); `viewer` only reads — the API refuses a viewer's every call
 * that changes something with FORBIDDEN (`details.reason: "viewer_read_only"`).
 */
import { SPACE_ROLES } from "@rakazo/db/states";
import { z } from "zod";
import { defineContract, inviteId, spaceId, timestamp, userId } from "../define.ts";

const role = z.enum(SPACE_ROLES);
/** A code as typed or carried by a link: case, spaces and dashes do not matter. */
const code = z.string().trim().min(1).max(64);
const redeemed = {
  spaceId: z.string(),
  spaceName: z.string(),
  role,
};
const inviteView = {
  id: z.string(),
  spaceId: z.string(),
  role,
  createdAt: timestamp,
  expiresAt: timestamp,
};

export const memberList = defineContract({
  name: "member/list",
  auth: "token",
  summary: "List a space's members",
  description:
    "The people of one of the caller's spaces (any role may read it), oldest member first, each with their role; `you` marks the caller. `serverOwner` is the installation's server owner (the first user unless the operator transferred it with `./rakazo owner transfer`), whether or not they are in this space.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ spaceId }),
  output: z.strictObject({
    members: z.array(
      z.strictObject({
        userId: z.string(),
        name: z.string(),
        role,
        joinedAt: timestamp,
        you: z.boolean(),
        serverOwner: z.boolean(),
      }),
    ),
    serverOwner: z.strictObject({ userId: z.string(), name: z.string() }).nullable(),
  }),
});

export const memberSetRole = defineContract({
  name: "member/setRole",
  auth: "token",
  summary: "Change a member's role",
  description:
    "An owner gives a member of the space another role (`owner`, `member` or `viewer`). A space keeps at least one owner (LAST_OWNER). Someone not in the space answers NOT_FOUND.",
  errors: ["LAST_OWNER", "NOT_FOUND", "NOT_SPACE_OWNER"],
  input: z.strictObject({ spaceId, userId, role }),
  output: z.strictObject({ userId: z.string(), role }),
});

export const memberRemove = defineContract({
  name: "member/remove",
  auth: "token",
  summary: "Remove a member",
  description:
    "An owner removes a member; anyone may remove themselves (leave). At once: every token and web session of theirs is refused in this space, their control of the space's screens ends and its gateways close their live screens and terminals. Someone left in no space has nothing to sign in to: all their tokens and sessions are revoked (`tokensRevoked`). A space keeps at least one owner (LAST_OWNER).",
  // Besides its own three, the codes of closing the person's screens on the space's machines
  // (CONTROLLED_MACHINE_ERRORS less NOT_IN_CONTROL); that part is best effort and logs a failure.
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "LAST_OWNER",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "NOT_SPACE_OWNER",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "UNSUPPORTED",
  ],
  input: z.strictObject({ spaceId, userId }),
  output: z.strictObject({
    removed: z.literal(true),
    userId: z.string(),
    tokensRevoked: z.number().int(),
    controlEnded: z.number().int(),
  }),
});

export const inviteCreate = defineContract({
  name: "invite/create",
  auth: "token",
  summary: "Invite someone into a space",
  description:
    "An owner makes a one-time invite code for the space, shown once (only its hash is stored); the web app also offers it as the link `<web>/invite#<code>`. It gives `role` (`member` unless `viewer`), expires after `ttlSeconds` (7 days unless given; 5 minutes to 30 days) and is spent by its first redemption (`invite/accept` for someone signed in, `invite/redeem` for a new person).",
  errors: ["NOT_FOUND", "NOT_SPACE_OWNER"],
  input: z.strictObject({
    spaceId,
    role: z.enum(["member", "viewer"]).optional(),
    ttlSeconds: z
      .number()
      .int()
      .min(300)
      .max(30 * 24 * 3600)
      .optional(),
  }),
  output: z.strictObject({ ...inviteView, code: z.string() }),
});

export const inviteList = defineContract({
  name: "invite/list",
  auth: "token",
  summary: "List a space's open invites",
  description:
    "An owner's view of the space's invites still open (not redeemed, revoked or expired), newest first; never a code.",
  errors: ["NOT_FOUND", "NOT_SPACE_OWNER"],
  input: z.strictObject({ spaceId }),
  output: z.array(z.strictObject(inviteView)),
});

export const inviteRevoke = defineContract({
  name: "invite/revoke",
  auth: "token",
  summary: "Revoke an open invite",
  description:
    "An owner withdraws an open invite of the space: its code is refused from then on (INVITE_INVALID). A spent, expired or foreign invite answers NOT_FOUND.",
  errors: ["NOT_FOUND", "NOT_SPACE_OWNER"],
  input: z.strictObject({ spaceId, inviteId }),
  output: z.strictObject({ revoked: z.literal(true), inviteId: z.string() }),
});

export const inviteAccept = defineContract({
  name: "invite/accept",
  auth: "token",
  summary: "Join a space with an invite code",
  description:
    "The signed-in caller joins the invite's space with its role and spends the code. Someone already in that space gets ALREADY_MEMBER and the code stays open.",
  errors: ["ALREADY_MEMBER", "INVITE_EXPIRED", "INVITE_INVALID", "INVITE_USED"],
  input: z.strictObject({ code }),
  output: z.strictObject(redeemed),
});

export const inviteRedeem = defineContract({
  name: "invite/redeem",
  auth: "invite",
  summary: "Join as a new person with an invite code",
  description:
    "Needs no API token: the invite code is the credential. Creates a person named `userName`, adds them to the invite's space with its role, spends the code and answers their first API token, shown once (as setup does for the first user). Someone who already has a token joins with `invite/accept` instead.",
  errors: ["INVITE_EXPIRED", "INVITE_INVALID", "INVITE_USED"],
  input: z.strictObject({ code, userName: z.string().trim().min(1).max(100) }),
  output: z.strictObject({
    ...redeemed,
    userId: z.string(),
    tokenId: z.string(),
    token: z.string(),
  }),
});
