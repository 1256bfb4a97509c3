export * from "./env.ts";
export * from "./homes.ts";
export * from "./provider.ts";
