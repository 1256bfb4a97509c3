export { type ChainPolicy, DEFAULT_CHAIN_POLICY } from "./chain.ts";
export * from "./errors.ts";
export { isTransientBrowserFile } from "./exclude.ts";
export { checkHomeKey } from "./home-folders.ts";
export * from "./keys.ts";
export { LocalAgentHomeStore, type LocalAgentHomeStoreOptions } from "./local-store.ts";
export { fileHomeLock, type HomeLock, KeyedMutex, type ReleaseLock } from "./lock.ts";
export { computeManifest, type HomeManifest } from "./manifest.ts";
export {
  createS3Client,
  ObjectAgentHomeStore,
  type ObjectAgentHomeStoreOptions,
  type ObjectStorageConfig,
  objectKey,
} from "./object-store.ts";
export * from "./seal.ts";
export * from "./store.ts";
