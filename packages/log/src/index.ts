export * from "./logger.ts";
export * from "./redact.ts";
