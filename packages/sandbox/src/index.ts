export * from "./archive.ts";
export * from "./errors.ts";
export { DIRECTORY_NO_FOLLOW, FILE_NO_FOLLOW, fdPath, openBeneath, openChild } from "./no-follow.ts";
export { normalizeWorkspacePath } from "./paths.ts";
export * from "./provider.ts";
/** Who a Docker computer runs as: the owner its bind-mounted home must have (PRV-5). */
export {
  WORKSPACE_GID as DOCKER_HOME_GID,
  WORKSPACE_UID as DOCKER_HOME_UID,
} from "./providers/docker/container-spec.ts";
export { createFakeProvider, type FakeProviderOptions } from "./providers/fake/fake-provider.ts";
export { createPageEmulator } from "./providers/fake/page-emulator.ts";
export {
  createProvider,
  type DockerProviderConfig,
  type HostProviderConfig,
  type ProviderConfig,
  type ProviderHooks,
  type RemoteProviderConfig,
} from "./registry.ts";
export * from "./supervised-desktop.ts";
export * from "./supervised-page-browser.ts";
export * from "./supervised-processes.ts";
export * from "./supervised-screens.ts";
export * from "./supervised-terminal.ts";
export * from "./supervisor-client.ts";
export { persistentToolEnv } from "./tool-env.ts";
