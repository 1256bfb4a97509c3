export * from "./approvals.ts";
export * from "./bot-policy.ts";
export * from "./describe.ts";
export * from "./guard.ts";
export * from "./policy.ts";
