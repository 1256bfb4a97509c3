export {
  decodeMetadataQuery,
  type E2BEmulator,
  type EmulatorOptions,
  type Flavor,
  startE2BEmulator,
} from "./emulator.ts";
