/**
 * One valid input per RPC, built from a tenant's ids. The generated suites
 * (tests/api/registry-*.test.ts) call every RPC with these, so a new RPC needs an entry here
 * (the type below makes a missing one fail `pnpm typecheck`; the suites fail at runtime too).
 */
import type { RpcInput, RpcName } from "@rakazo/api-contract";

/** The ids an example may use; the tenancy suite swaps each for a foreign and a missing one. */
export interface ExampleIds {
  readonly spaceId: string;
  readonly computerId: string;
  readonly botId: string;
  readonly runId: string;
  readonly tokenId: string;
  readonly userId: string;
  readonly inviteId: string;
  readonly approvalId: string;
}

/** Example keys ending in `Id` that name no tenant-owned row (so are not swapped), and why. */
export const NON_TENANT_IDS: Readonly<Record<string, string>> = {
  capabilityId: "a screen capability is reachable only through its computerId, which is swapped",
  attachmentId: "an attachment is looked up within its computerId, which is swapped",
};

export const MISSING_IDS: ExampleIds = {
  spaceId: `spc_${"z".repeat(20)}`,
  computerId: `cmp_${"z".repeat(20)}`,
  botId: `bot_${"z".repeat(20)}`,
  runId: `run_${"z".repeat(20)}`,
  tokenId: `tok_${"z".repeat(20)}`,
  userId: `usr_${"z".repeat(20)}`,
  inviteId: `inv_${"z".repeat(20)}`,
  approvalId: `apr_${"z".repeat(20)}`,
};

type Examples = { readonly [N in RpcName]: (ids: ExampleIds) => RpcInput<N> };

export const RPC_EXAMPLES: Examples = {
  "setup/bootstrap": () => ({ userName: "root" }),
  "space/create": () => ({ name: "Lab" }),
  "space/list": () => ({}),
  "bot/create": ({ spaceId }) => ({ spaceId, name: "Ada" }),
  "bot/list": ({ spaceId }) => ({ spaceId }),
  "bot/policy/get": ({ botId }) => ({ botId }),
  "bot/policy/set": ({ botId }) => ({
    botId,
    policy: { mode: "ask", domains: [{ domain: "example.test", mode: "allow" }] },
  }),
  "token/create": () => ({ name: "ci" }),
  "token/list": () => ({}),
  "token/revoke": ({ tokenId }) => ({ tokenId }),
  "member/list": ({ spaceId }) => ({ spaceId }),
  "member/setRole": ({ spaceId, userId }) => ({ spaceId, userId, role: "member" }),
  "member/remove": ({ spaceId, userId }) => ({ spaceId, userId }),
  "invite/create": ({ spaceId }) => ({ spaceId, role: "viewer" }),
  "invite/list": ({ spaceId }) => ({ spaceId }),
  "invite/revoke": ({ spaceId, inviteId }) => ({ spaceId, inviteId }),
  "invite/accept": () => ({ code: "ABCDE-FGHJK-MNPQR-STVWX" }),
  "invite/redeem": () => ({ code: "ABCDE-FGHJK-MNPQR-STVWX", userName: "newcomer" }),
  "computer/create": ({ spaceId, botId }) => ({ spaceId, botId, mode: "private", name: "box" }),
  "computer/get": ({ computerId }) => ({ computerId }),
  "computer/list": ({ spaceId }) => ({ spaceId }),
  "computer/exec": ({ computerId }) => ({ computerId, argv: ["echo", "hi"] }),
  "computer/stop": ({ computerId }) => ({ computerId }),
  "computer/start": ({ computerId }) => ({ computerId }),
  "computer/setNetwork": ({ computerId }) => ({
    computerId,
    network: { mode: "allowlist", allow: [{ host: "example.com", ports: [443] }] },
  }),
  "computer/delete": ({ computerId }) => ({ computerId }),
  "computer/observe": ({ computerId, botId }) => ({ computerId, botId }),
  "computer/act": ({ computerId, botId }) => ({ computerId, botId, actions: [{ type: "move", x: 1, y: 1 }] }),
  "computer/files/list": ({ computerId }) => ({ computerId, path: "" }),
  "computer/files/read": ({ computerId }) => ({ computerId, path: "notes.txt" }),
  "computer/files/download": ({ computerId }) => ({ computerId, path: "notes.txt" }),
  "computer/files/upload": ({ computerId, botId }) => ({
    computerId,
    botId,
    path: "upload.txt",
    contentBase64: Buffer.from("hello").toString("base64"),
  }),
  "computer/files/write": ({ computerId, botId }) => ({ computerId, botId, path: "notes.txt", text: "hi" }),
  "computer/attachments/list": ({ computerId }) => ({ computerId }),
  "computer/attachments/download": ({ computerId }) => ({
    computerId,
    attachmentId: `att_${"z".repeat(20)}`,
  }),
  "computer/activity": ({ computerId }) => ({ computerId, limit: 10 }),
  "computer/takeControl": ({ computerId, botId }) => ({ computerId, botId }),
  "computer/releaseControl": ({ computerId, botId }) => ({ computerId, botId }),
  "computer/stopBot": ({ computerId, botId }) => ({ computerId, botId }),
  "computer/operations": ({ computerId }) => ({ computerId }),
  "computer/update": ({ computerId }) => ({ computerId }),
  "computer/recover": ({ computerId }) => ({ computerId }),
  "computer/releaseInterrupted": () => ({ id: `op_${"z".repeat(20)}`, workersStopped: true }),
  "run/start": ({ computerId, botId }) => ({ computerId, botId }),
  "run/get": ({ runId }) => ({ runId }),
  "run/heartbeat": ({ runId }) => ({ runId, fencingToken: 1 }),
  "run/requestTakeover": ({ runId }) => ({ runId, fencingToken: 1, reason: "captcha" }),
  "run/complete": ({ runId }) => ({ runId, fencingToken: 1 }),
  "run/fail": ({ runId }) => ({ runId, fencingToken: 1, error: "gave up" }),
  "run/cancel": ({ runId }) => ({ runId, fencingToken: 1 }),
  "agent/run": ({ computerId, botId }) => ({ computerId, botId, task: "open the browser" }),
  "approval/list": ({ computerId }) => ({ computerId }),
  "approval/decide": ({ approvalId }) => ({ approvalId, decision: "approve" }),
  "agent/status": () => ({}),
  "run/transcript": ({ runId }) => ({ runId }),
  "run/list": ({ computerId, botId }) => ({ computerId, botId }),
  "run/waiting": ({ spaceId }) => ({ spaceId }),
  "computer/screenUrl": ({ computerId, botId }) => ({ computerId, botId, policy: "view" }),
  "computer/revokeScreenUrl": ({ computerId }) => ({ computerId, capabilityId: "A".repeat(22) }),
  "computer/terminalUrl": ({ computerId, botId }) => ({ computerId, botId }),
  // The external surface: keys and screens are caller-chosen strings.
  "external/computer/create": () => ({ screen: "conversation-1", wait: false }),
  "external/computer/list": () => ({}),
  "external/computer/state": ({ computerId }) => ({ computerId }),
  "external/computer/exec": ({ computerId }) => ({ computerId, argv: ["echo", "hi"] }),
  "external/file/read": ({ computerId }) => ({ computerId, path: "notes.txt" }),
  "external/file/write": ({ computerId }) => ({ computerId, path: "notes.txt", content: "hi" }),
  "external/computer/observe": ({ computerId }) => ({ computerId, screen: "conversation-1" }),
  "external/browser/navigate": ({ computerId }) => ({ computerId, screen: "s", url: "https://example.com" }),
  "external/browser/snapshot": ({ computerId }) => ({ computerId, screen: "s" }),
  "external/browser/act": ({ computerId }) => ({
    computerId,
    screen: "s",
    actions: [{ type: "wait", ms: 1 }],
  }),
  "external/computer/destroy": ({ computerId }) => ({ computerId, wait: false }),
  "external/process/start": ({ computerId }) => ({ computerId, argv: ["sleep", "1"] }),
  "external/process/read": ({ computerId }) => ({ computerId, handle: `prc_${"0".repeat(32)}` }),
  "external/process/kill": ({ computerId }) => ({ computerId, handle: `prc_${"0".repeat(32)}` }),
};

/** The example for `name`; fails with a message telling the RPC's author what to add. */
export function exampleFor(name: string, ids: ExampleIds): Record<string, unknown> {
  const build = (RPC_EXAMPLES as Readonly<Record<string, ((ids: ExampleIds) => object) | undefined>>)[name];
  if (!build) throw new Error(`${name} has no example input: add one to tests/support/rpc-examples.ts`);
  return { ...build(ids) };
}
