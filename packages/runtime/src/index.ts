export { type BuiltHomes, buildHomes } from "./build-homes.ts";
export { buildProvider } from "./build-provider.ts";
export { createRuntime, type Runtime, type RuntimeConfig } from "./create-runtime.ts";
export { runtimeConfigFromEnv } from "./from-env.ts";
