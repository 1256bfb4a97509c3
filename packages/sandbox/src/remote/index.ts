/** The shared remote-computer runtime (CMP-8) and the per-provider surface it runs over. */
export { createRemoteProvider, type RemoteProviderOptions } from "./remote-provider.ts";
export { commandLine, quote, quoteArgv } from "./shell.ts";
export { type DaemonSettings, daemonFlags, supervisorBootCommand } from "./supervisor-start.ts";
export {
  type RemoteBackend,
  type RemoteCommand,
  type RemoteCommandResult,
  type RemoteCreateRequest,
  type RemoteMachine,
  type RemotePortTarget,
  StaleMachineError,
} from "./surface.ts";
