/**
 * Computer sizes: memory, CPUs and processes per computer. Deployment defaults apply
 * unless `computer/create` asks for more or less, never past the deployment's maximum, so one
 * computer can neither starve the host nor its neighbours.
 */
import type { ComputerSizing } from "@rakazo/sandbox";
import { AppError } from "../errors.ts";

export interface ComputerSize {
  readonly memoryMib: number;
  readonly cpus: number;
  readonly pids: number;
  /** The home's disk (Docker with home disks: a filesystem of this size). */
  readonly diskMib: number;
}

export interface SizingPolicy {
  readonly defaults: ComputerSize;
  readonly max: ComputerSize;
}

/** Used when a deployment configures nothing (tests, embedded use): the Docker provider's defaults. */
export const DEFAULT_SIZING: SizingPolicy = {
  defaults: { memoryMib: 4_096, cpus: 2, pids: 4_096, diskMib: 10_240 },
  max: { memoryMib: 16_384, cpus: 4, pids: 16_384, diskMib: 102_400 },
};

const UNITS: Record<keyof ComputerSize, string> = {
  memoryMib: "MiB",
  cpus: "CPUs",
  pids: "processes",
  diskMib: "MiB of disk",
};

/** The size a new computer gets: the defaults overridden field by field; over a maximum is INVALID_INPUT. */
export function resolveSize(policy: SizingPolicy, asked: Partial<ComputerSize> | undefined): ComputerSize {
  const size = { ...policy.defaults, ...asked };
  for (const key of Object.keys(UNITS) as (keyof ComputerSize)[]) {
    if (size[key] > policy.max[key]) {
      throw new AppError(
        "INVALID_INPUT",
        `size.${key} ${size[key]} is above this deployment's maximum of ${policy.max[key]} ${UNITS[key]}`,
        { field: `size.${key}`, max: policy.max[key] },
      );
    }
  }
  return size;
}

/** Row columns → what the provider applies; null columns (older computers) take provider defaults. */
export function sizingOf(row: {
  memoryMib: number | null;
  cpuMillis: number | null;
  pidsLimit: number | null;
  diskMib: number | null;
}): ComputerSizing {
  return {
    ...(row.memoryMib !== null ? { memoryBytes: row.memoryMib * 1024 ** 2 } : {}),
    ...(row.cpuMillis !== null ? { nanoCpus: row.cpuMillis * 1_000_000 } : {}),
    ...(row.pidsLimit !== null ? { pidsLimit: row.pidsLimit } : {}),
    ...(row.diskMib !== null ? { diskBytes: row.diskMib * 1024 ** 2 } : {}),
  };
}
