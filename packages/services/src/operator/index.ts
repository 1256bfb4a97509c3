export * from "./issue-user-token.ts";
export * from "./list-all-computers.ts";
export * from "./list-operations.ts";
export * from "./move-stopped-computers.ts";
export * from "./recover-computer.ts";
