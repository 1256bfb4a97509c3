/**
 * What a started desktop holds in memory that it does not need (docs/decisions.md, "Lighter
 * desktops"): its Xvfb carries no GLX, so Mesa's software renderer (`dri/swrast_dri.so`, with
 * llvmpipe, ~11 MiB private per Xvfb) is never mapped. Real Xvfb, x11vnc and Chromium through
 * `processLauncher`, as the supervisor starts them.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { afterAll, describe, expect, it } from "vitest";
import { processLauncher } from "./desktop-stack.ts";
import { planStack } from "./stack-argv.ts";

const missing = missingOrFail("desktop memory", ["Xvfb", "x11vnc", "xdotool", "chromium"]);

/** Shared objects a process maps, by path. */
function mappedFiles(pid: number): string[] {
  const maps = readFileSync(`/proc/${pid}/maps`, "utf8");
  return [...new Set(maps.split("\n").flatMap((line) => line.match(/\s(\/\S+)$/)?.[1] ?? []))];
}

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `desktop memory — skipped, missing: ${missing.join(", ")}` : "desktop memory",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rakazo-stack-memory-"));
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("starts Xvfb without GLX: no Mesa driver is mapped into it", async () => {
      // Displays 990–999 are a range no other host suite uses.
      const displayBase = 990 + Math.floor(Math.random() * 10);
      const plan = planStack(
        { runDir: path.join(root, "run"), displayBase, debugPortBase: 21_000 + displayBase },
        { index: 0, generation: 1 },
        path.join(root, "profile"),
      );
      const stack = await processLauncher({ logDir: path.join(root, "logs") }).start(plan);
      try {
        // Xvfb writes its pid into the display's lock file.
        const xvfbPid = Number(readFileSync(`/tmp/.X${plan.display}-lock`, "utf8").trim());
        const files = mappedFiles(xvfbPid);
        expect(files.some((file) => file.includes("Xvfb"))).toBe(true);
        expect(files.filter((file) => /\/dri\/|libgallium|swrast/.test(file))).toEqual([]);
      } finally {
        await stack.teardown();
      }
    }, 90_000);
  },
);
