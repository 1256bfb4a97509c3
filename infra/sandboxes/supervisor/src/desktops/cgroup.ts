/**
 * Samples the computer's own cgroup for admission: cgroup v2 (`memory.current`,
 * `memory.max`, `pids.*`, `cpu.pressure`) at the root of the container's cgroup namespace, with a
 * cgroup v1 fallback (`memory/`, `pids/` controllers) for engines that still run v1.
 * A missing file means "no bound" for that resource; a sample is never an error.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { CgroupSample } from "./admission.ts";

function read(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}

function bound(raw: string | null): number | null {
  if (raw === null || raw === "max") return null;
  const value = Number(raw);
  // v1 reports "no limit" as a page-rounded 2^63.
  return Number.isFinite(value) && value > 0 && value < 2 ** 60 ? value : null;
}

function statField(stat: string | null, name: string): number {
  const line = stat?.split("\n").find((entry) => entry.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) || 0 : 0;
}

function pressureAvg10(raw: string | null): number | null {
  const match = raw?.match(/^some .*avg10=([0-9.]+)/m);
  return match ? Number(match[1]) : null;
}

export function sampleCgroup(root = "/sys/fs/cgroup"): CgroupSample | null {
  const current = read(path.join(root, "memory.current"));
  if (current !== null) {
    const stat = read(path.join(root, "memory.stat"));
    return {
      memoryUsed: Math.max(0, Number(current) - statField(stat, "inactive_file")),
      memoryMax: bound(read(path.join(root, "memory.max"))),
      pidsCurrent: Number(read(path.join(root, "pids.current")) ?? 0),
      pidsMax: bound(read(path.join(root, "pids.max"))),
      cpuPressure: pressureAvg10(read(path.join(root, "cpu.pressure"))),
    };
  }
  const usage = read(path.join(root, "memory", "memory.usage_in_bytes"));
  if (usage === null) return null;
  const stat = read(path.join(root, "memory", "memory.stat"));
  return {
    memoryUsed: Math.max(0, Number(usage) - statField(stat, "total_inactive_file")),
    memoryMax: bound(read(path.join(root, "memory", "memory.limit_in_bytes"))),
    pidsCurrent: Number(read(path.join(root, "pids", "pids.current")) ?? 0),
    pidsMax: bound(read(path.join(root, "pids", "pids.max"))),
    cpuPressure: null,
  };
}
