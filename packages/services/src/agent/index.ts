export * from "./apps.ts";
export * from "./attachments.ts";
export * from "./fenced.ts";
export * from "./files.ts";
export * from "./hooks.ts";
export * from "./model-config.ts";
export * from "./page.ts";
export * from "./start.ts";
