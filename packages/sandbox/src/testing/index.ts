export { CONTRACT_TESTS, type ContractOptions, runSandboxProviderContract } from "./contract.ts";
