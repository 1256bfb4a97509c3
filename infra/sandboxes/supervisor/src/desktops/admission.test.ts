/** Admission as pure decisions over a slot snapshot and a cgroup sample (CMP-5). */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type AdmissionPolicy,
  type CgroupSample,
  DEFAULT_ADMISSION_POLICY,
  headroomVerdict,
  MIB,
  parseMiB,
  planAdmission,
} from "./admission.ts";
import { sampleCgroup } from "./cgroup.ts";
import type { SlotView } from "./slot-table.ts";

const slot = (index: number, patch: Partial<SlotView> = {}): SlotView => ({
  index,
  generation: 1,
  state: "running",
  botId: `bot-${index}`,
  lastUsedAt: 1000 + index,
  controlled: false,
  busy: 0,
  ...patch,
});

const policy: AdmissionPolicy = {
  desktop: { memoryBytes: 200 * MIB, pids: 100 },
  floor: { memoryBytes: 100 * MIB, pids: 50 },
  cpuPressureMax: 90,
};

const sample = (patch: Partial<CgroupSample> = {}): CgroupSample => ({
  memoryUsed: 500 * MIB,
  memoryMax: 1024 * MIB,
  pidsCurrent: 100,
  pidsMax: 1000,
  cpuPressure: 5,
  ...patch,
});

describe("headroomVerdict", () => {
  it("admits when free memory covers one desktop plus the floor", () => {
    // 1024 - 500 = 524 MiB free >= 200 + 100.
    expect(headroomVerdict(sample(), policy, 0)).toBeNull();
  });

  it("refuses for memory when the floor would be eaten (CMP-5)", () => {
    // 1024 - 750 = 274 MiB free < 300.
    expect(headroomVerdict(sample({ memoryUsed: 750 * MIB }), policy, 0)).toBe("memory");
  });

  it("charges a whole desktop for each one still starting", () => {
    const used = sample({ memoryUsed: 600 * MIB }); // 424 MiB free
    expect(headroomVerdict(used, policy, 0)).toBeNull();
    expect(headroomVerdict(used, policy, 1)).toBe("memory"); // 424 < 2*200 + 100
  });

  it("refuses for pids, and for cpu pressure only when the policy asks", () => {
    expect(headroomVerdict(sample({ pidsCurrent: 900 }), policy, 0)).toBe("pids");
    expect(headroomVerdict(sample({ cpuPressure: 95 }), policy, 0)).toBe("cpu");
    expect(headroomVerdict(sample({ cpuPressure: 95 }), { ...policy, cpuPressureMax: 0 }, 0)).toBeNull();
  });

  it("has nothing to bound without a sample or with unbounded cgroups", () => {
    expect(headroomVerdict(null, policy, 0)).toBeNull();
    expect(
      headroomVerdict(sample({ memoryMax: null, pidsMax: null, memoryUsed: 10 ** 12 }), policy, 5),
    ).toBeNull();
  });
});

describe("planAdmission", () => {
  const full = sample({ memoryUsed: 900 * MIB });

  it("uses a new slot when there is room", () => {
    expect(planAdmission([slot(0)], 0, sample(), policy)).toEqual({ kind: "use", index: 1, generation: 1 });
  });

  it("at the memory bound evicts the oldest idle uncontrolled desktop, with the reason", () => {
    const slots = [
      slot(0, { lastUsedAt: 5 }),
      slot(1, { lastUsedAt: 1 }),
      slot(2, { lastUsedAt: 0, controlled: true }),
    ];
    expect(planAdmission(slots, 0, full, policy)).toEqual({ kind: "evict", index: 1, reason: "memory" });
  });

  it("tears nothing down in vain: refuses when even every idle desktop would not make room", () => {
    // 1024 - 1000 = 24 MiB free; need 300: a shortfall of 276 MiB > one desktop's 200.
    const tight = sample({ memoryUsed: 1000 * MIB });
    expect(planAdmission([slot(0), slot(1, { controlled: true })], 0, tight, policy)).toMatchObject({
      kind: "unavailable",
      reason: "memory",
    });
    expect(planAdmission([slot(0), slot(1)], 0, tight, policy)).toEqual({
      kind: "evict",
      index: 0,
      reason: "memory",
    });
  });

  it("never evicts a controlled or busy desktop: refuses with the reason and the live count", () => {
    const slots = [slot(0, { controlled: true }), slot(1, { busy: 1 }), slot(2, { state: "starting" })];
    expect(planAdmission(slots, 0, full, policy)).toEqual({
      kind: "unavailable",
      reason: "memory",
      active: 3,
      limit: 0,
    });
  });

  it("reports the explicit cap as reason `limit` before looking at the cgroup", () => {
    const slots = [slot(0, { controlled: true })];
    expect(planAdmission(slots, 1, sample(), policy)).toMatchObject({ kind: "unavailable", reason: "limit" });
    expect(planAdmission([slot(0)], 1, sample(), policy)).toEqual({
      kind: "evict",
      index: 0,
      reason: "limit",
    });
  });
});

describe("sampleCgroup", () => {
  it("reads cgroup v2 files, using usage minus inactive file cache", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "cg2-"));
    writeFileSync(path.join(root, "memory.current"), "1000\n");
    writeFileSync(path.join(root, "memory.stat"), "anon 600\nfile 400\ninactive_file 300\n");
    writeFileSync(path.join(root, "memory.max"), "4096\n");
    writeFileSync(path.join(root, "pids.current"), "12\n");
    writeFileSync(path.join(root, "pids.max"), "max\n");
    writeFileSync(
      path.join(root, "cpu.pressure"),
      "some avg10=12.50 avg60=1.00 avg300=0.00 total=1\nfull avg10=0.00\n",
    );
    expect(sampleCgroup(root)).toEqual({
      memoryUsed: 700,
      memoryMax: 4096,
      pidsCurrent: 12,
      pidsMax: null,
      cpuPressure: 12.5,
    });
  });

  it("falls back to cgroup v1 controllers; no cgroup at all is no sample", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "cg1-"));
    mkdirSync(path.join(root, "memory"));
    mkdirSync(path.join(root, "pids"));
    writeFileSync(path.join(root, "memory", "memory.usage_in_bytes"), "2000\n");
    writeFileSync(path.join(root, "memory", "memory.stat"), "inactive_file 9\ntotal_inactive_file 500\n");
    writeFileSync(path.join(root, "memory", "memory.limit_in_bytes"), "9223372036854771712\n");
    writeFileSync(path.join(root, "pids", "pids.current"), "7\n");
    writeFileSync(path.join(root, "pids", "pids.max"), "300\n");
    expect(sampleCgroup(root)).toEqual({
      memoryUsed: 1500,
      memoryMax: null,
      pidsCurrent: 7,
      pidsMax: 300,
      cpuPressure: null,
    });
    expect(sampleCgroup(path.join(root, "nothing"))).toBeNull();
  });

  it("parses sizes given in MiB", () => {
    expect(parseMiB("150", 1)).toBe(150 * MIB);
    expect(parseMiB("-3", 7)).toBe(7);
    expect(parseMiB(undefined, 7)).toBe(7);
  });
});

describe("the default charge", () => {
  // The desktops bench's 1 GiB computer: ~168 MiB of cgroup memory per live desktop, supervisor
  // included (docs/decisions.md, "Lighter desktops").
  const measured = (live: number): CgroupSample =>
    sample({ memoryUsed: live * 168 * MIB, memoryMax: 1024 * MIB, pidsCurrent: live * 40, pidsMax: 2048 });

  it("admits a fifth desktop into 1 GiB after four measured ones, and no sixth", () => {
    expect(headroomVerdict(measured(4), DEFAULT_ADMISSION_POLICY, 0)).toBeNull();
    expect(headroomVerdict(measured(5), DEFAULT_ADMISSION_POLICY, 0)).toBe("memory");
  });

  it("charges no less than a measured desktop: a starting one never overshoots the floor", () => {
    expect(DEFAULT_ADMISSION_POLICY.desktop.memoryBytes).toBeGreaterThanOrEqual(168 * MIB);
  });
});
