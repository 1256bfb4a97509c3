export * from "./boat.ts";
export * from "./client.ts";
