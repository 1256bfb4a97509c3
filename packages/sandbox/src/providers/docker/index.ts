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
export {
  createDockerProvider,
  type DockerDesktopContext,
  type DockerProviderOptions,
} from "./docker-provider.ts";
