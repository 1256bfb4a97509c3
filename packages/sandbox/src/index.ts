export * from "./archive.ts";
export * from "./errors.ts";
export { normalizeWorkspacePath } from "./paths.ts";
export * from "./provider.ts";
export { createFakeProvider, type FakeProviderOptions } from "./providers/fake/fake-provider.ts";
export { createProvider, type DockerProviderConfig, type ProviderConfig } from "./registry.ts";
export * from "./supervised-desktop.ts";
export * from "./supervisor-client.ts";
