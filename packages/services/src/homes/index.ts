export * from "./after-runs.ts";
export * from "./checkpoint.ts";
export * from "./context.ts";
export * from "./destroy.ts";
export * from "./files.ts";
export * from "./keys.ts";
export * from "./reconcile.ts";
export * from "./restore.ts";
