export { type ContractOptions, runSandboxProviderContract } from "./contract.ts";
