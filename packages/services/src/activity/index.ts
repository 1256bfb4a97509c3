export * from "./feed.ts";
export * from "./lines.ts";
export * from "./list.ts";
export * from "./record.ts";
