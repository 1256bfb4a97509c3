export * from "./catalog.ts";
export * from "./queue.ts";
