export { CONTRACT_TESTS, type ContractOptions, runSandboxProviderContract } from "./contract.ts";
export {
  PAGE_BROWSER_CONTRACT_TESTS,
  type PageBrowserContractOptions,
  runPageBrowserContract,
} from "./page-browser-contract.ts";
