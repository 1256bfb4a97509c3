export {
  computerSlug,
  containerCreateOptions,
  containerName,
  RUNTIME_DIR,
  WORKSPACE_DIR,
} from "./container-spec.ts";
export { type DeploymentContainer, listDeploymentContainers } from "./deployment.ts";
export {
  createDemuxer,
  type RawExecRequest,
  type RawExecResult,
  runExec,
  startExecStream,
} from "./docker-exec.ts";
export type { DockerDesktopContext, DockerProviderOptions } from "./docker-options.ts";
export { createDockerProvider } from "./docker-provider.ts";
