export * from "./env.ts";
export * from "./provider.ts";
export * from "./providers.ts";
