/**
 * Background commands over the in-computer supervisor's process manager
 * (infra/sandboxes/supervisor/src/processes/processes.ts): the same for every provider whose computer runs
 * the supervisor.
 */
import type { SandboxProcesses } from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

export function createSupervisedProcesses(transport: SupervisorTransport): SandboxProcesses {
  return {
    start: ({ owner, argv, cwd, env }) =>
      transport.call("process.start", { owner, argv, cwd: cwd ?? "", ...(env ? { env } : {}) }),
    read: ({ owner, handle, since, waitMs }) =>
      transport.call("process.read", { owner, handle, since: since ?? 0, waitMs: waitMs ?? 0 }),
    kill: ({ owner, handle, signal }) =>
      transport.call("process.kill", { owner, handle, signal: signal ?? "SIGTERM" }),
  };
}
