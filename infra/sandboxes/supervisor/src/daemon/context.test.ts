/**
 * The composition root wires the desktops to the gateway: tearing a slot down first stops the
 * bot's terminal server (TRM-6); the handlers reach every capability through the one context.
 * In-memory desktops, a gateway that is never started: no processes, no sockets.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DesktopSlots } from "../desktops/desktop-slots.ts";
import type { StackLauncher } from "../desktops/desktop-stack.ts";
import { ComputerGateway } from "../gateway/computer-gateway.ts";
import { createContext } from "./context.ts";
import { dispatch } from "./rpc-server.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function parts() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-context-"));
  dirs.push(dir);
  const launcher: StackLauncher = {
    start: async (plan) => ({
      plan,
      capture: async () => ({ png: Buffer.alloc(0), width: 1, height: 1, frameHash: "h" }),
      runStep: async () => undefined,
      serveScreen: async () => undefined,
      teardown: async () => undefined,
    }),
  };
  const desktops = new DesktopSlots({
    launcher,
    workspace: dir,
    layout: { runDir: dir, displayBase: 10, debugPortBase: 9300 },
    screenLimit: 0,
  });
  const gateway = new ComputerGateway({
    listen: { path: path.join(dir, "gateway.sock") },
    stateDir: dir,
    slotAt: (index) => desktops.slotAt(index),
  });
  return { dir, desktops, gateway };
}

describe("the daemon's context", () => {
  it("stops a bot's terminal server before its desktop is torn down", async () => {
    const { desktops, gateway } = parts();
    const context = createContext({ desktops, gateway });
    await dispatch(context, "desktop.observe", { botId: "bot_a" });
    await dispatch(context, "terminal.start", { botId: "bot_a", cwd: "." });
    expect(gateway.terminal.started("bot_a")).toBe(true);
    await dispatch(context, "desktop.release", { botId: "bot_a" });
    expect(gateway.terminal.started("bot_a")).toBe(false);
  });

  it("leaves the gateway alone without a context, and refuses screens.* without a gateway", async () => {
    const { desktops, gateway } = parts();
    await desktops.observe("bot_a");
    gateway.terminal.start("bot_a", { cwd: desktops.workspace });
    await desktops.release("bot_a");
    expect(gateway.terminal.started("bot_a")).toBe(true);
    const bare = createContext({ desktops });
    expect(() => dispatch(bare, "screens.connections", {})).toThrow(/no screen gateway/);
  });
});
