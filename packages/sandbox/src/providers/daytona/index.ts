export * from "./daytona.ts";
