export * from "./account.ts";
export * from "./computers.ts";
export * from "./tools.ts";
