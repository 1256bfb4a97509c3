export * from "./issue-user-token.ts";
export * from "./list-all-computers.ts";
export * from "./move-stopped-computers.ts";
