/**
 * The soak, shortened for CI (PER-4/OPS-4; `pnpm soak` runs the full 10 minutes):
 * the real launcher's API, worker and web processes, one real Docker computer with 3 bot
 * desktops acting through the API (observe, click, type, exec) and 4 RFB viewers reading their
 * screens through the web proxy and the computer's gateway, for 40 s sampled every 10 s.
 * Asserts 0 errors and bounded memory growth; records its figures as suite "soak-ci".
 *
 * The growth bound is looser than the full soak's 10 % on purpose: the comparison spans 30 s
 * (the 10 s sample against the 40 s one), where one step of a V8 heap (API, worker, web,
 * supervisor) before its first major collection, or a renderer's first few hundred typed
 * characters, is a large share of the process; over 10 minutes those amortise. 1.5× still
 * catches what a leak per update or per call would do at this rate (hundreds of each).
 */
import { COMPUTER_IMAGE } from "@rakazo/sandbox/testing";
import { describe, expect, it } from "vitest";
import { recordFigures } from "../support/figures.ts";
import { runSoak, soakGrowth, soakRows } from "../support/soak.ts";
import { requireDocker } from "../support/tools.ts";

const SHORT_GROWTH_BOUND = 1.5;
const gate = await requireDocker("the soak, shortened");

describe.skipIf(gate.skip)(gate.title, () => {
  it("3 bots and 4 viewers on one computer: no errors, memory bounded", async () => {
    const result = await runSoak({
      bots: 3,
      viewers: 4,
      durationMs: 40_000,
      sampleMs: 10_000,
      image: COMPUTER_IMAGE,
    });
    recordFigures("soak-ci", soakRows(result, `≤ ${SHORT_GROWTH_BOUND}×`));
    expect(result.errors).toEqual({});
    expect(result.samples.length).toBeGreaterThanOrEqual(5);
    expect(result.operations.act).toBeGreaterThan(0);
    expect(result.operations.exec).toBeGreaterThan(0);
    expect(result.operations.updates).toBeGreaterThan(0);
    const growth = soakGrowth(result);
    // Every process group was sampled: the three host processes and the computer's.
    expect(growth.map((g) => g.group).sort()).toEqual(
      expect.arrayContaining(["api", "worker", "web", "Xvfb", "Chromium", "x11vnc", "supervisor"]),
    );
    for (const g of growth) expect(g.ratio, g.group).toBeLessThanOrEqual(SHORT_GROWTH_BOUND);
  }, 420_000);
});
