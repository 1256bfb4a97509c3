export * from "./list.ts";
export * from "./release.ts";
export * from "./view.ts";
