/** The mutation guard (BRW-8): a bot's policy, and the actions waiting for a person's decision. */
import { APPROVAL_STATUSES, GUARDED_TOOLS, MUTATION_MODES } from "@rakazo/db/states";
import { z } from "zod";
import { approvalId, botId, computerId, defineContract, timestamp } from "../define.ts";

const mode = z.enum(MUTATION_MODES);
/** A domain as a person types it: `example.test` (its subdomains included) or `*.example.test`. */
const domain = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[A-Za-z0-9.-]+$/, "expected a domain such as example.test");

const mutationPolicy = z.strictObject({
  mode,
  tools: z.partialRecord(z.enum(GUARDED_TOOLS), mode).optional(),
  domains: z.array(z.strictObject({ domain, mode })).max(100).readonly().optional(),
});

const botPolicyView = z.strictObject({
  botId: z.string(),
  policy: mutationPolicy,
  stored: z.boolean(),
  updatedAt: timestamp.nullable(),
});

const approvalView = z.strictObject({
  id: z.string(),
  computerId: z.string(),
  botId: z.string(),
  runId: z.string(),
  tool: z.string(),
  description: z.string(),
  rule: z.string(),
  status: z.enum(APPROVAL_STATUSES),
  decidedBy: z.string().nullable(),
  createdAt: timestamp,
  expiresAt: timestamp,
});

const POLICY_RULES =
  "`mode` (allow, ask or deny) applies to every mutating tool (computer_act, shell, write_file, attach_file, open_path, launch_app, browser_navigate, browser_act); `tools` overrides it per tool; `domains` overrides both for browser_navigate by the URL's host (a domain matches itself and its subdomains, the longest match wins). Read-only tools always run.";

export const botPolicyGet = defineContract({
  name: "bot/policy/get",
  auth: "token",
  summary: "Get a bot's mutation policy",
  description: `The bot's mutation guard policy; \`stored: false\` while it has none (everything allowed). ${POLICY_RULES}`,
  errors: ["NOT_FOUND"],
  input: z.strictObject({ botId }),
  output: botPolicyView,
});

export const botPolicySet = defineContract({
  name: "bot/policy/set",
  auth: "token",
  summary: "Set a bot's mutation policy",
  description: `Replaces the bot's mutation guard policy; it applies from the bot's next mutating tool call, in a running run too. Owners and members may set it (FORBIDDEN for viewers). ${POLICY_RULES}`,
  errors: ["NOT_FOUND"],
  input: z.strictObject({ botId, policy: mutationPolicy }),
  output: botPolicyView,
});

export const approvalList = defineContract({
  name: "approval/list",
  auth: "token",
  summary: "List actions waiting for approval",
  description:
    "The computer's mutating tool calls a bot's policy asked a person about (its run is `waiting_approval`), oldest first, each with its redacted description and when it expires (then it counts as denied).",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ computerId }),
  output: z.array(approvalView),
});

export const approvalDecide = defineContract({
  name: "approval/decide",
  auth: "token",
  summary: "Approve or deny a waiting action",
  description:
    "Approve: the bot's waiting tool call runs once. Deny: it does not run and the bot reads the denial as the tool's error. Either way the run continues, and the decision is one Activity line naming the caller. CONFLICT when the action was already decided or expired, or its run stopped waiting.",
  errors: ["CONFLICT", "NOT_FOUND"],
  input: z.strictObject({ approvalId, decision: z.enum(["approve", "deny"]) }),
  output: approvalView,
});
