export * from "./secret-scan.ts";
