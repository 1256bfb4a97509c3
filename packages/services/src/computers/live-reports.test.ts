// computer/get's live reports: served at most LIVE_REPORT_TTL_MS after they arrived, shared by
// concurrent readers, and never across computers or machines (live-reports.ts header).
import { describe, expect, it } from "vitest";
import { createLiveReports, LIVE_REPORT_TTL_MS } from "./live-reports.ts";

function clock() {
  let at = 1_000_000;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

function counted<T>(answers: () => T) {
  let reads = 0;
  return {
    read: async () => {
      reads += 1;
      return answers();
    },
    get reads() {
      return reads;
    },
  };
}

describe("live reports", () => {
  it("serves a report for less than the TTL after it arrived, then reads again", async () => {
    const time = clock();
    const reports = createLiveReports(LIVE_REPORT_TTL_MS, time.now);
    let live = 0;
    const source = counted(() => ({ live }));
    expect(await reports.get("desktops", "cmp_a", "m1", source.read)).toEqual({ live: 0 });
    live = 1;
    time.advance(LIVE_REPORT_TTL_MS - 1);
    expect(await reports.get("desktops", "cmp_a", "m1", source.read)).toEqual({ live: 0 });
    time.advance(1);
    expect(await reports.get("desktops", "cmp_a", "m1", source.read)).toEqual({ live: 1 });
    expect(source.reads).toBe(2);
  });

  it("concurrent readers share one read", async () => {
    const reports = createLiveReports();
    let release: (value: { live: number }) => void = () => {};
    let reads = 0;
    const read = () => {
      reads += 1;
      return new Promise<{ live: number }>((resolve) => {
        release = resolve;
      });
    };
    const all = Promise.all(Array.from({ length: 16 }, () => reports.get("desktops", "cmp_a", "m1", read)));
    release({ live: 3 });
    expect(await all).toEqual(Array.from({ length: 16 }, () => ({ live: 3 })));
    expect(reads).toBe(1);
  });

  it("never serves one computer's report for another, nor for another part", async () => {
    const reports = createLiveReports();
    expect(await reports.get("desktops", "cmp_a", "m", async () => "a's desktops")).toBe("a's desktops");
    expect(await reports.get("desktops", "cmp_b", "m", async () => "b's desktops")).toBe("b's desktops");
    expect(await reports.get("disk", "cmp_a", "m", async () => "a's disk")).toBe("a's disk");
    expect(await reports.get("desktops", "cmp_a", "m", async () => "again")).toBe("a's desktops");
  });

  it("a different machine for the same computer (restarted, replaced, used) reads again", async () => {
    const reports = createLiveReports();
    await reports.get("desktops", "cmp_a", "docker/ref1/100", async () => "old");
    expect(await reports.get("desktops", "cmp_a", "docker/ref1/200", async () => "restarted")).toBe(
      "restarted",
    );
    expect(await reports.get("desktops", "cmp_a", "docker/ref2/200", async () => "replaced")).toBe(
      "replaced",
    );
  });

  it("forget drops the computer's desktops at once", async () => {
    const reports = createLiveReports();
    await reports.get("desktops", "cmp_a", "m", async () => "before");
    await reports.get("desktops", "cmp_b", "m", async () => "b");
    reports.forget("cmp_a");
    expect(await reports.get("desktops", "cmp_a", "m", async () => "after")).toBe("after");
    expect(await reports.get("desktops", "cmp_b", "m", async () => "b again")).toBe("b");
  });

  it("a read that threw is not kept", async () => {
    const reports = createLiveReports();
    await expect(
      reports.get("desktops", "cmp_a", "m", async () => {
        throw new Error("no answer");
      }),
    ).rejects.toThrow("no answer");
    expect(await reports.get("desktops", "cmp_a", "m", async () => "answered")).toBe("answered");
  });

  it("knows a machine only once it was read for it (its first read is the one not known)", async () => {
    const reports = createLiveReports();
    expect(reports.knows("desktops", "cmp_a", "m1")).toBe(false);
    const read = reports.get("desktops", "cmp_a", "m1", () => new Promise<string>(() => {}));
    expect(reports.knows("desktops", "cmp_a", "m1")).toBe(true);
    expect(reports.knows("desktops", "cmp_a", "m2")).toBe(false);
    expect(reports.knows("desktops", "cmp_b", "m1")).toBe(false);
    reports.forget("cmp_a");
    expect(reports.knows("desktops", "cmp_a", "m1")).toBe(false);
    void read;
  });
});
