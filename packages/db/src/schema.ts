/**
 * The control plane's tables. Ids are prefixed text (./ids.ts). Enumerations are text columns
 * checked in TypeScript, not Postgres enums: later issues add states and kinds, and a text
 * column needs no `ALTER TYPE` dance inside a migration transaction.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type {
  ApiTokenKind,
  ApprovalStatus,
  ComputerMode,
  ComputerState,
  MutationPolicy,
  OperationKind,
  OperationStatus,
  RunStatus,
  SpaceRole,
} from "./states.ts";

export * from "./states.ts";

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () =>
  timestamp("updated_at", { withTimezone: true })
    .notNull()
    .defaultNow()
    .$onUpdate(() => new Date());

export const users = pgTable("users", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

export const spaces = pgTable("spaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** The space's content key, wrapped by the master key (PER-5); set by the persistence layer. */
  contentKeyWrapped: text("content_key_wrapped"),
  createdAt: createdAt(),
});

export const spaceMembers = pgTable(
  "space_members",
  {
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role").$type<SpaceRole>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.spaceId, t.userId] }), index("space_members_user_idx").on(t.userId)],
);

/**
 * One-time invitations into a space: only a SHA-256 of the code is stored (the code is shown
 * once); spent by its first redemption (`redeemed_at`), refused after `expires_at`.
 */
export const spaceInvites = pgTable(
  "space_invites",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    /** The role the redeemer gets: `member` or `viewer`. */
    role: text("role").$type<SpaceRole>().notNull(),
    secretHash: text("secret_hash").notNull(),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    redeemedAt: timestamp("redeemed_at", { withTimezone: true }),
    redeemedBy: text("redeemed_by").references(() => users.id, { onDelete: "set null" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("space_invites_secret_hash_uq").on(t.secretHash),
    index("space_invites_space_idx").on(t.spaceId),
  ],
);

/**
 * The server owner once the operator transferred it (`./rakazo owner transfer`): one row at
 * most. Without a row the server owner is the installation's first user.
 */
export const serverOwner = pgTable(
  "server_owner",
  {
    singleton: boolean("singleton").primaryKey().default(true),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "restrict" }),
    changedAt: timestamp("changed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("server_owner_singleton", sql`${t.singleton}`)],
);

/** Bearer tokens: only a SHA-256 of the secret is stored; the secret is shown once. */
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `api` (a person's own, for scripts and the CLI) or `web_session` (the web app's sign-in). */
    kind: text("kind").$type<ApiTokenKind>().notNull().default("api"),
    secretHash: text("secret_hash").notNull(),
    createdAt: createdAt(),
    /** Refreshed at most once a minute per token, so authentication stays one read. */
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    /** After it the token is refused; null: it lasts until revoked. */
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("api_tokens_secret_hash_uq").on(t.secretHash)],
);

export const bots = pgTable(
  "bots",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("bots_space_idx").on(t.spaceId)],
);

export const computers = pgTable(
  "computers",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    mode: text("mode").$type<ComputerMode>().notNull(),
    /** For a private computer, the bot whose home it is (CMP-1). */
    ownerBotId: text("owner_bot_id").references(() => bots.id, { onDelete: "set null" }),
    providerKind: text("provider_kind").notNull(),
    /** Opaque, passed back only to the same kind; an acceleration path, not durable data (PRV-3). */
    providerRef: text("provider_ref"),
    state: text("state").$type<ComputerState>().notNull(),
    /** Stable key of the stored workspace, kept across replacement machines. */
    homeKey: text("home_key").notNull(),
    /** Revision of the latest stored workspace checkpoint (PER-3/4); 0 = never checkpointed. */
    homeRevision: integer("home_revision").notNull().default(0),
    /** The home's data key, wrapped by the space's content key (PER-5). */
    dataKeyWrapped: text("data_key_wrapped"),
    lastError: text("last_error"),
    /**
     * The computer's size, fixed at create: deployment defaults or the caller's
     * override within the deployment's maximum. Null on computers made before sizing existed:
     * the provider's defaults apply.
     */
    memoryMib: integer("memory_mib"),
    /** CPUs in thousandths (1500 = 1.5 CPUs). */
    cpuMillis: integer("cpu_millis"),
    pidsLimit: integer("pids_limit"),
    /** The home's disk in MiB (Docker home disks); null on computers made before: the provider's default. */
    diskMib: integer("disk_mib"),
    /**
     * The network policy: `{ mode, allow? }`, set at create and changed only while
     * stopped. Null on computers made before policies existed: `none`, as they ran.
     */
    network: jsonb("network").$type<{
      mode: "none" | "egress" | "allowlist";
      allow?: { host: string; ports?: number[] }[];
    }>(),
    /** Last agent or human use; the idle sweeper stops computers unused for too long (CMP-7). */
    lastActivityAt: timestamp("last_activity_at", { withTimezone: true }).notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
  },
  (t) => [index("computers_space_idx").on(t.spaceId), uniqueIndex("computers_home_key_uq").on(t.homeKey)],
);

/** Durable progress of a lifecycle job, kept apart from the provisioning fence (OPS-1). */
export const computerOperations = pgTable(
  "computer_operations",
  {
    id: text("id").primaryKey(),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    kind: text("kind").$type<OperationKind>().notNull(),
    /** The real lifecycle stage ("provisioning", "restoring", …), never a percentage. */
    stage: text("stage").notNull(),
    status: text("status").$type<OperationStatus>().notNull(),
    /** pg-boss job id, derived from the operation id (so a resend is idempotent, OPS-4). */
    jobId: text("job_id"),
    /** The worker that claimed it (`worker_heartbeats.id`); its silence interrupts it (OPS-5). */
    workerId: text("worker_id"),
    heartbeatAt: timestamp("heartbeat_at", { withTimezone: true }),
    error: text("error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    index("computer_operations_computer_idx").on(t.computerId, t.createdAt),
    index("computer_operations_active_idx")
      .on(t.status)
      .where(sql`${t.status} in ('queued', 'running', 'interrupted')`),
    // OPS-1: at most one computer-wide reservation (update or recovery) per computer at a time.
    uniqueIndex("computer_operations_reservation_uq")
      .on(t.computerId)
      .where(sql`${t.kind} in ('update', 'recover') and ${t.status} in ('queued', 'running', 'interrupted')`),
  ],
);

/**
 * One row per worker process, renewed while it lives (OPS-5). A silent worker's operations
 * become `interrupted`; its silence alone never releases anything (OPS-6).
 */
export const workerHeartbeats = pgTable("worker_heartbeats", {
  id: text("id").primaryKey(),
  startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
  heartbeatAt: timestamp("heartbeat_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Per-bot execution leases with fencing (CMP-3). One row per (computer, bot) lives forever:
 * `fencingToken` only grows, so a holder whose lease was superseded can always be told apart.
 */
export const executionLeases = pgTable(
  "execution_leases",
  {
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    botId: text("bot_id")
      .notNull()
      .references(() => bots.id, { onDelete: "cascade" }),
    holderId: text("holder_id"),
    fencingToken: bigint("fencing_token", { mode: "number" }).notNull().default(0),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    acquiredAt: timestamp("acquired_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.computerId, t.botId] })],
);

/** A human's exclusive control of one bot's screen (TKO-1), fenced like execution leases. */
export const controlLeases = pgTable(
  "control_leases",
  {
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    botId: text("bot_id")
      .notNull()
      .references(() => bots.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    fencingToken: bigint("fencing_token", { mode: "number" }).notNull().default(0),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    acquiredAt: timestamp("acquired_at", { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.computerId, t.botId] })],
);

export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    botId: text("bot_id")
      .notNull()
      .references(() => bots.id, { onDelete: "cascade" }),
    status: text("status").$type<RunStatus>().notNull(),
    error: text("error"),
    /**
     * An agent run's task and the user who started it: what the reconciler needs to send the
     * run's job again when the API died between committing the run and enqueueing it.
     */
    task: text("task"),
    startedBy: text("started_by"),
    /** When a worker began hosting the run; null while its job was never picked up. */
    hostedAt: timestamp("hosted_at", { withTimezone: true }),
    /** Why the run asked for a human (TKO-3), and since when. */
    takeoverReason: text("takeover_reason"),
    waitingSince: timestamp("waiting_since", { withTimezone: true }),
    createdAt: createdAt(),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (t) => [
    index("runs_computer_bot_idx").on(t.computerId, t.botId),
    index("runs_active_idx")
      .on(t.computerId, t.botId)
      .where(sql`${t.status} in ('queued', 'running', 'waiting_takeover', 'waiting_approval')`),
  ],
);

/** Activity history (`computer.command` and lifecycle events, TOOL-4); already redacted. */
export const activityEvents = pgTable(
  "activity_events",
  {
    id: text("id").primaryKey(),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    botId: text("bot_id"),
    runId: text("run_id"),
    type: text("type").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("activity_events_computer_idx").on(t.computerId, t.createdAt)],
);

const bytea = customType<{ data: Uint8Array; driverData: Buffer }>({
  dataType: () => "bytea",
  toDriver: (value) => Buffer.from(value.buffer, value.byteOffset, value.byteLength),
  fromDriver: (value) => new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
});

/**
 * What `attach_file` attached (FIL-3): the bytes are kept here, capped at the attachment size
 * limit, so the person can download them whether or not the computer runs.
 */
export const attachments = pgTable(
  "attachments",
  {
    id: text("id").primaryKey(),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    botId: text("bot_id").notNull(),
    runId: text("run_id"),
    /** As the bot named it, relative to its folder. */
    path: text("path").notNull(),
    name: text("name").notNull(),
    size: integer("size").notNull(),
    note: text("note"),
    content: bytea("content").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("attachments_computer_idx").on(t.computerId, t.createdAt)],
);

/**
 * The external computer surface (EXT-2): a caller-chosen computer key (a
 * conversation id, a team root, `account:<name>`) and the computer it names now. Adopting by
 * key is a lookup here; destroying removes the row, so the key may name a new computer later.
 * One row per live key; the computer row keeps its own history.
 */
export const externalComputers = pgTable(
  "external_computers",
  {
    key: text("key").primaryKey(),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("external_computers_computer_uq").on(t.computerId)],
);

/**
 * An agent run's transcript (what the person watches in the computer view): model text, each
 * tool call with its redacted arguments and result, status changes and errors, numbered per
 * run (`seq`, 1, 2, …). Written by the worker hosting the run, announced like activity, kept
 * with the run. `thumbnail` is a small PNG of an observation's frame (bounded, see
 * packages/computer-tools/src/thumbnail.ts), never the full screenshot.
 */
export const runEvents = pgTable(
  "run_events",
  {
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    thumbnail: bytea("thumbnail"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("run_events_run_seq_uq").on(t.runId, t.seq)],
);

/**
 * A bot's mutation guard policy (BRW-8), one row per bot; without a row every mutation is
 * allowed and the guard records nothing. Shape: `MutationPolicy` (./states.ts).
 */
export const botMutationPolicies = pgTable("bot_mutation_policies", {
  botId: text("bot_id")
    .primaryKey()
    .references(() => bots.id, { onDelete: "cascade" }),
  policy: jsonb("policy").$type<MutationPolicy>().notNull(),
  updatedBy: text("updated_by"),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A mutating tool call the guard asked a person about (BRW-8): its run waits in
 * `waiting_approval` while the row is `pending`. The description is redacted before it is stored.
 */
export const mutationApprovals = pgTable(
  "mutation_approvals",
  {
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    computerId: text("computer_id")
      .notNull()
      .references(() => computers.id, { onDelete: "cascade" }),
    botId: text("bot_id").notNull(),
    tool: text("tool").notNull(),
    description: text("description").notNull(),
    /** The policy rule that asked: `domain example.test`, `tool browser_act`, `default`. */
    rule: text("rule").notNull(),
    status: text("status").$type<ApprovalStatus>().notNull(),
    decidedBy: text("decided_by"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("mutation_approvals_computer_idx").on(t.computerId, t.createdAt),
    // A run waits for one action at a time.
    uniqueIndex("mutation_approvals_pending_uq").on(t.runId).where(sql`${t.status} = 'pending'`),
  ],
);
