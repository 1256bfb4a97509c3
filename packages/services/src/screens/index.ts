export * from "./authorize.ts";
export * from "./config.ts";
export * from "./revoke.ts";
export * from "./screen-url.ts";
export * from "./terminal-url.ts";
