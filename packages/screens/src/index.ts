export {
  CAPABILITY_VERSION,
  type OpenFailure,
  type OpenResult,
  type ScreenClaims,
  type ScreenPolicy,
} from "@rakazo/protocol/capability";
export * from "./capabilities.ts";
export * from "./keyring.ts";
