/**
 * When a desktop counts as started (processLauncher): DevTools answers before Chromium maps its
 * window, and keys xdotool sends in between are lost, so an agent's first observe-then-act
 * typed into nothing (seen in CI under load). The launcher here runs a Chromium stand-in that
 * answers DevTools at once and shows the real Chromium window only 1.5 s later: `start` must
 * not resolve before the window is there. Real Xvfb, x11vnc, xdotool and Chromium.
 */
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { afterAll, describe, expect, it } from "vitest";
import type { ActionStep } from "./actions.ts";
import { processLauncher } from "./desktop-stack.ts";
import { planStack } from "./stack-argv.ts";

const missing = missingOrFail("desktop stack readiness", ["Xvfb", "x11vnc", "xdotool", "chromium"]);

/**
 * Answers DevTools' /json/version on the `--remote-debugging-port` it is given at once, then
 * after 1.5 s starts the real Chromium with the launcher's own flags (same display, a profile of
 * its own, no debugging port). It ends with that browser, so one that fails to start shows as an
 * exit with its log, not as a 60 s wait for a window that never comes.
 */
const SLOW_WINDOW_CHROMIUM = `#!/usr/bin/env node
const http = require("node:http");
const { spawn } = require("node:child_process");
const argv = process.argv.slice(2);
const port = Number(argv.find((a) => a.startsWith("--remote-debugging-port=")).split("=")[1]);
http.createServer((req, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end("{}"); })
  .listen(port, "127.0.0.1");
setTimeout(() => {
  const args = argv
    .filter((a) => !a.startsWith("--remote-debugging-port="))
    .map((a) => (a.startsWith("--user-data-dir=") ? a + "-real" : a));
  spawn("chromium", args, { stdio: "inherit" }).on("exit", (code, signal) => {
    console.error("real chromium exited", code, signal);
    process.exit(1);
  });
}, 1500);
`;

function visibleChromiumWindows(display: number): Promise<string> {
  return new Promise((resolve) =>
    execFile(
      "xdotool",
      ["search", "--onlyvisible", "--class", "chromium"],
      { env: { ...process.env, DISPLAY: `:${display}` } },
      (_error, stdout) => resolve(stdout.trim()),
    ),
  );
}

describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `desktop stack readiness — skipped, missing: ${missing.join(", ")}`
    : "desktop stack readiness",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rakazo-stack-ready-"));
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    /**
     * One slot's plan in a folder of its own under `root`. Displays 950–989 are a range no other
     * host suite uses; each test takes 20 of them.
     */
    const planIn = (name: string, firstDisplay: number) => {
      const displayBase = firstDisplay + Math.floor(Math.random() * 20);
      return planStack(
        { runDir: path.join(root, `run-${name}`), displayBase, debugPortBase: 21_000 + displayBase },
        { index: 0, generation: 1 },
        path.join(root, `profile-${name}`),
      );
    };

    it("keeps an unchanged page's frames identical: the text caret does not blink", async () => {
      const plan = planIn("caret", 950);
      const stack = await processLauncher({
        chromiumConfigDir: path.join(root, "chromium-config"),
        logDir: path.join(root, "logs-caret"),
      }).start(plan);
      try {
        const page = "data:text/html,<input autofocus style='font-size:40px;width:900px'>";
        const steps: ActionStep[] = [
          { kind: "xdotool", args: ["key", "ctrl+l"] },
          { kind: "xdotool", args: ["type", "--delay", "5", page] },
          { kind: "xdotool", args: ["key", "Return"] },
          { kind: "wait", ms: 2_000 },
          { kind: "xdotool", args: ["mousemove", "400", "100", "click", "1"] },
          { kind: "xdotool", args: ["type", "hello"] },
          { kind: "wait", ms: 1_000 },
        ];
        for (const step of steps) await stack.runStep(step);
        // A blinking caret flips every ~0.5 s: 12 frames over 2 s see both phases.
        const hashes = new Set<string>();
        for (let i = 0; i < 12; i += 1) {
          hashes.add((await stack.capture()).frameHash);
          await new Promise((resolve) => setTimeout(resolve, 170));
        }
        expect(hashes.size).toBe(1);
      } finally {
        await stack.teardown();
      }
    }, 90_000);

    it("starts a desktop only once Chromium's window is shown, not when DevTools first answers", async () => {
      const binary = path.join(root, "slow-window-chromium");
      writeFileSync(binary, SLOW_WINDOW_CHROMIUM);
      chmodSync(binary, 0o755);
      const plan = planIn("slow-window", 970);
      const logDir = path.join(root, "logs");
      const stack = await processLauncher({
        chromiumBinary: binary,
        chromiumConfigDir: path.join(root, "chromium-config"),
        chromiumStopTimeoutMs: 500,
        logDir,
      })
        .start(plan)
        .catch((error: Error) => {
          const log = path.join(logDir, `chromium-${plan.display}.log`);
          const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2_000) : "(no log)";
          throw new Error(`${error.message}; the browser's log ends:\n${tail}`);
        });
      try {
        expect(await visibleChromiumWindows(plan.display)).toMatch(/^\d+/);
      } finally {
        await stack.teardown();
      }
    }, 90_000);
  },
);
