import type { Caller, ServiceContext } from "@rakazo/services";
import { FrameMemory } from "./frames.ts";
import type { AgentMutationHooks, BrowserProviderMode } from "./services-internal.ts";

/**
 * Everything a computer tool needs for one run: who acts (caller, bot, run) under which lease
 * (fencing token), on which computer, with which model. Every tool call passes the fencing
 * token to the service verbs, so a superseded run is refused at its next call (CMP-3).
 */
export interface ToolSession {
  readonly ctx: ServiceContext;
  readonly caller: Caller;
  readonly computerId: string;
  readonly botId: string;
  readonly runId: string;
  readonly fencingToken: number;
  readonly model: { readonly vision: boolean };
  /** Page browser backend (BRW-7); fake computers default to the in-process emulator. */
  readonly browser?: BrowserProviderMode;
  /** Teaching guard and checkpoints around every mutating tool (BRW-8). */
  readonly hooks?: AgentMutationHooks;
}

/** Per-session state the tools keep between calls (TOOL-2, TOOL-3). */
export interface ToolState {
  readonly frames: FrameMemory;
}

export function newToolState(): ToolState {
  return { frames: new FrameMemory() };
}

export function fence(session: ToolSession) {
  return { computerId: session.computerId, botId: session.botId, fencingToken: session.fencingToken };
}
