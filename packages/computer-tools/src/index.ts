export * from "./agent-session.ts";
export * from "./frames.ts";
export * from "./schemas.ts";
export * from "./session.ts";
export * from "./thumbnail.ts";
export { formatActResult, formatSnapshot } from "./tools/browser.ts";
export * from "./toolset.ts";
export * from "./transcript.ts";
