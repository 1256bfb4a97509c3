export { type BoatEmulator, type BoatEmulatorOptions, startBoatEmulator } from "./boat/emulator.ts";
export {
  type DaytonaEmulator,
  type DaytonaEmulatorOptions,
  startDaytonaEmulator,
} from "./daytona/emulator.ts";
export { createMachinePool, type MachinePool, type MachinePoolOptions } from "./machines.ts";
export { bakeTemplateImage, type EmulatedTemplate, type EmulatedTemplates } from "./templates.ts";
