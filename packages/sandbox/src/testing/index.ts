export { buildArchive, readAll } from "./archive.ts";
export { CONTRACT_TESTS, type ContractOptions, runSandboxProviderContract } from "./contract.ts";
export { COMPUTER_IMAGE, DOCKER_RUNTIME, dockerUnavailable } from "./docker.ts";
export {
  PAGE_BROWSER_CONTRACT_TESTS,
  type PageBrowserContractOptions,
  runPageBrowserContract,
} from "./page-browser-contract.ts";
export {
  dockerOptedOut,
  missingOrFail,
  missingTools,
  requireDocker,
  requireRoot,
  requireTools,
  type SuiteGate,
} from "./tools.ts";
