export * from "./env.ts";
export * from "./provider.ts";
