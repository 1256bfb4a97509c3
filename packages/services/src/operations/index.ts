export * from "./list.ts";
export * from "./release.ts";
export * from "./reservation.ts";
export * from "./update.ts";
export * from "./view.ts";
