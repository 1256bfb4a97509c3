/**
 * The Daytona emulator's state — its sandboxes, their sessions, preview grants and port
 * listeners — the lifecycle steps the route groups share, and Daytona's (NestJS) error answer
 * `{statusCode, message, error, code?}`.
 */
import http from "node:http";
import { type RequestRecord, sendJson } from "../http-util.ts";
import type { MachinePool } from "../machines.ts";
import type { PortListener } from "../port-proxy.ts";
import type { Call } from "../router.ts";

export type DaytonaState =
  | "creating"
  | "started"
  | "stopping"
  | "stopped"
  | "starting"
  | "destroying"
  | "destroyed"
  | "error";

export interface SessionCommand {
  readonly id: string;
  readonly command: string;
  exitCode: number | null;
  readonly stdout: Buffer[];
  readonly stderr: Buffer[];
  /** Ordered output for followers: [stream, bytes]. */
  readonly events: ["stdout" | "stderr", Buffer][];
  readonly followers: Set<(event: ["stdout" | "stderr", Buffer] | null) => void>;
}

export interface Sandbox {
  readonly id: string;
  readonly name: string;
  state: DaytonaState;
  labels: Record<string, string>;
  readonly env: Record<string, string>;
  readonly public: boolean;
  containerId: string;
  autoStopInterval: number;
  autoArchiveInterval: number;
  autoDeleteInterval: number;
  /** Epoch ms of a wall-clock destroy (ttlMinutes), null = none. */
  destroyAt: number | null;
  lastActivity: number;
  readonly createdAt: number;
  /** Bumped at every start: standard preview tokens reset with it. */
  generation: number;
  readonly previewTokens: Map<number, { token: string; generation: number }>;
  readonly listeners: Map<number, PortListener>;
  readonly sessions: Map<string, Map<string, SessionCommand>>;
  errorReason: string | null;
}

export interface Daytona {
  readonly machines: MachinePool;
  readonly now: () => number;
  readonly sandboxes: Map<string, Sandbox>;
  readonly requests: RequestRecord[];
  /** This server's origin, known once it listens. */
  origin: string;
  /** Sends a socket.io event to every connected SDK (`events.ts`); set once the server listens. */
  emit: (event: "sandbox.created" | "sandbox.state.updated", payload: unknown) => void;
}

export function fail(
  response: http.ServerResponse,
  statusCode: number,
  message: string,
  code?: string,
): void {
  sendJson(response, statusCode, {
    statusCode,
    message,
    error: http.STATUS_CODES[statusCode],
    ...(code ? { code } : {}),
  });
}

export function dto(daytona: Daytona, s: Sandbox) {
  return {
    id: s.id,
    organizationId: "org_emulator",
    name: s.name,
    user: "user",
    env: s.env,
    labels: s.labels,
    public: s.public,
    networkBlockAll: true,
    target: "local",
    cpu: 2,
    gpu: 0,
    memory: 2,
    disk: 10,
    state: s.state,
    errorReason: s.errorReason ?? undefined,
    recoverable: false,
    autoStopInterval: s.autoStopInterval,
    autoArchiveInterval: s.autoArchiveInterval,
    autoDeleteInterval: s.autoDeleteInterval,
    autoDestroyAt: s.destroyAt === null ? undefined : new Date(s.destroyAt).toISOString(),
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(daytona.now()).toISOString(),
    toolboxProxyUrl: `${daytona.origin}/toolbox`,
  };
}

/** A sandbox by id, or by name as the API also accepts. */
export function find(daytona: Daytona, idOrName: string): Sandbox | undefined {
  return daytona.sandboxes.get(idOrName) ?? [...daytona.sandboxes.values()].find((s) => s.name === idOrName);
}

export async function closeListeners(s: Sandbox): Promise<void> {
  for (const listener of s.listeners.values()) await listener.close();
  s.listeners.clear();
}

/** Moves a sandbox to `state` and tells the SDKs, as the service's event stream does. */
export function setState(daytona: Daytona, s: Sandbox, state: DaytonaState): void {
  const oldState = s.state;
  if (oldState === state) return;
  s.state = state;
  daytona.emit("sandbox.state.updated", { sandbox: dto(daytona, s), oldState, newState: state });
}

export async function stopSandbox(daytona: Daytona, s: Sandbox): Promise<void> {
  setState(daytona, s, "stopping");
  await closeListeners(s);
  await daytona.machines.stop(s.containerId);
  setState(daytona, s, "stopped");
}

export async function destroySandbox(daytona: Daytona, s: Sandbox): Promise<void> {
  setState(daytona, s, "destroying");
  await closeListeners(s);
  await daytona.machines.remove(s.containerId);
  setState(daytona, s, "destroyed");
}

/** The param `id` of a route pattern that has one. */
export function idParam(call: Call): string {
  return (call.params as Readonly<Record<string, string>>).id ?? "";
}
