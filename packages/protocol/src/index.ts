export * from "./authority.ts";
export * from "./desktop-action.ts";
export * from "./gateway.ts";
export * from "./json-schema.ts";
export * from "./page-action.ts";
export type { DeepReadonly } from "./readonly.ts";
export * from "./supervisor/answer.ts";
export * from "./supervisor/methods.ts";
