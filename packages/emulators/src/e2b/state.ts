/**
 * The E2B/Novita emulator's state — its sandboxes and their processes — and the lifecycle
 * steps every route group shares (schedule the TTL, pause, kill, expire), plus the services'
 * JSON error answer `{code:<int>, message}`.
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { sendJson } from "../http-util.ts";
import type { Containers, RunningProcess } from "./containers.ts";

export type Flavor = "e2b" | "novita";

export const ENVD_VERSION = "0.6.4";

export interface EmulatedSandbox {
  readonly id: string;
  readonly templateId: string;
  readonly containerId: string;
  readonly metadata: Record<string, string>;
  readonly startedAt: Date;
  endAt: Date;
  state: "running" | "paused";
  /** Issued at create and kept for the sandbox's life (a resume does not rotate it). */
  readonly envdAccessToken: string;
  readonly trafficAccessToken: string | undefined;
  readonly autoPause: boolean;
  timer?: NodeJS.Timeout;
  readonly processes: Map<number, EmulatedProcess>;
}

export interface EmulatedProcess {
  readonly proc: RunningProcess;
  readonly config: { cmd: string; args: string[]; envs: Record<string, string>; cwd?: string };
  readonly listeners: Set<(event: unknown) => void>;
}

export interface E2BState {
  readonly flavor: Flavor;
  readonly containers: Containers;
  readonly domain: string;
  readonly maxSandboxes: number;
  /** The envd header naming the sandbox a call is for. */
  readonly idHeader: "e2b-sandbox-id" | "novita-sandbox-id";
  readonly sandboxes: Map<string, EmulatedSandbox>;
  /** The next envd process id. */
  nextPid: number;
}

export function createState(options: {
  flavor: Flavor;
  containers: Containers;
  domain: string;
  maxSandboxes: number;
}): E2BState {
  return {
    ...options,
    idHeader: options.flavor === "e2b" ? "e2b-sandbox-id" : "novita-sandbox-id",
    sandboxes: new Map(),
    nextPid: 1000,
  };
}

/** A control-plane refusal with the service's status; answered by `sendApiError`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function sendApiError(response: ServerResponse, status: number, message: string): void {
  sendJson(response, status, { code: status, message });
}

export function newToken(): string {
  return randomBytes(16).toString("hex");
}

export function found(state: E2BState, id: string): EmulatedSandbox {
  const sbx = state.sandboxes.get(id);
  if (!sbx) throw new ApiError(404, `sandbox "${id}" not found`);
  return sbx;
}

/** (Re)arms the sandbox's TTL timer; a paused sandbox has none. */
export function schedule(state: E2BState, sbx: EmulatedSandbox): void {
  if (sbx.timer) clearTimeout(sbx.timer);
  if (sbx.state !== "running") return;
  const ms = Math.max(0, sbx.endAt.getTime() - Date.now());
  sbx.timer = setTimeout(() => void expire(state, sbx.id).catch(() => undefined), Math.min(ms, 2 ** 31 - 1));
  sbx.timer.unref();
}

export async function kill(state: E2BState, id: string): Promise<boolean> {
  const sbx = state.sandboxes.get(id);
  if (!sbx) return false;
  state.sandboxes.delete(id);
  if (sbx.timer) clearTimeout(sbx.timer);
  await state.containers.remove(sbx.containerId).catch(() => undefined);
  return true;
}

export async function pause(state: E2BState, sbx: EmulatedSandbox): Promise<void> {
  if (sbx.timer) clearTimeout(sbx.timer);
  await state.containers.pause(sbx.containerId);
  sbx.state = "paused";
}

/** The TTL's action: pause when the create asked for auto-pause, else kill. */
export async function expire(state: E2BState, id: string): Promise<void> {
  const sbx = state.sandboxes.get(id);
  if (sbx?.state !== "running") return;
  if (sbx.autoPause) await pause(state, sbx);
  else await kill(state, id);
}
