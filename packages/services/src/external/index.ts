export * from "./account.ts";
export * from "./computers.ts";
export * from "./processes.ts";
export * from "./tools.ts";
