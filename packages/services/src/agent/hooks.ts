/**
 * What the surrounding system runs around each mutating agent tool (BRW-8): shell, file writes,
 * desktop and browser actions alike. The teaching guard plugs into `beforeMutation` (throw to
 * refuse; the tool fails with that message and nothing runs); workspace checkpoints plug into
 * `afterMutation`. Read-only tools never call these.
 */
export interface AgentMutation {
  readonly computerId: string;
  readonly botId: string;
  readonly runId: string;
  readonly tool: string;
  /** The tool's validated arguments, unredacted: hooks run in-process and must not log them raw. */
  readonly args: unknown;
}

export interface AgentMutationHooks {
  beforeMutation?(mutation: AgentMutation): Promise<void>;
  afterMutation?(mutation: AgentMutation, outcome: { ok: boolean; error?: string }): Promise<void>;
}
