import { describe, expect, it } from "vitest";
import { profileDir, profileDirName } from "./profile-dir.ts";
import { chromiumArgv, planStack, vncSocketPath, x11vncArgv, xvfbArgv } from "./stack-argv.ts";

const layout = { runDir: "/run/rakazo", displayBase: 10, debugPortBase: 9300 };
const workspace = "/home/user/rakazo-home";

describe("profile keying (CMP-2)", () => {
  it("keys the profile to the bot, whatever slot serves it", () => {
    const a = planStack(layout, { index: 0, generation: 1 }, profileDir(workspace, "bot-a"));
    const b = planStack(layout, { index: 5, generation: 9 }, profileDir(workspace, "bot-a"));
    expect(a.profileDir).toBe(b.profileDir);
    expect(chromiumArgv(a, { freshProfile: false })).toContain(`--user-data-dir=${a.profileDir}`);
    expect(chromiumArgv(b, { freshProfile: false })).toContain(`--user-data-dir=${a.profileDir}`);
  });

  it("gives distinct bots distinct directories, including ids that differ only in escaped bytes", () => {
    const ids = [
      "a",
      "A",
      "a_",
      "a_5f",
      "a/b",
      "a_2fb",
      "a.b",
      "a-b",
      "日本",
      "../x",
      "..",
      ".",
      "x".repeat(300),
      "x".repeat(301),
    ];
    const names = ids.map(profileDirName);
    expect(new Set(names).size).toBe(ids.length);
  });

  it("keeps hostile ids inside .browser-profiles as one safe segment", () => {
    for (const id of ["../x", "..", "/etc/passwd", "a/../../b", "\0", "x".repeat(5000), " "]) {
      const name = profileDirName(id);
      expect(name).toMatch(/^bot[-.][A-Za-z0-9_.-]+$/);
      expect(name).not.toContain("/");
      expect(name).not.toBe("..");
      expect(name.length).toBeLessThanOrEqual(200);
      expect(profileDir(workspace, id)).toBe(`${workspace}/.browser-profiles/${name}`);
    }
  });

  it("refuses an empty bot id", () => {
    expect(() => profileDirName("")).toThrow();
  });
});

describe("vnc sockets (SCR-2)", () => {
  it("are unique per slot and generation", () => {
    const paths = new Set<string>();
    for (let index = 0; index < 4; index += 1) {
      for (let generation = 1; generation <= 4; generation += 1)
        paths.add(vncSocketPath("/run/rakazo", index, generation));
    }
    expect(paths.size).toBe(16);
    expect(vncSocketPath("/run/rakazo", 2, 3)).toBe("/run/rakazo/vnc/slot2-g3.sock");
  });

  it("x11vnc listens only on that socket, never on TCP", () => {
    const plan = planStack(layout, { index: 1, generation: 2 }, "/p");
    const argv = x11vncArgv(plan);
    expect(argv.slice(argv.indexOf("-unixsock"), argv.indexOf("-unixsock") + 2)).toEqual([
      "-unixsock",
      "/run/rakazo/vnc/slot1-g2.sock",
    ]);
    expect(argv.slice(argv.indexOf("-rfbport"), argv.indexOf("-rfbport") + 2)).toEqual(["-rfbport", "0"]);
    expect(argv).toContain(":11");
  });
});

describe("stack argv", () => {
  const plan = planStack(
    layout,
    { index: 3, generation: 1 },
    "/home/user/rakazo-home/.browser-profiles/bot-a",
  );

  it("Xvfb: display base + index, 1280x800x24, no TCP, no GLX", () => {
    expect(xvfbArgv(plan)).toEqual([
      "Xvfb",
      ":13",
      "-screen",
      "0",
      "1280x800x24",
      "-nolisten",
      "tcp",
      "-extension",
      "GLX",
    ]);
  });

  it("Chromium: loopback-only debugging on the slot's port, session restore, no crash bubble", () => {
    const argv = chromiumArgv(plan, { freshProfile: false });
    expect(argv).toContain("--remote-debugging-address=127.0.0.1");
    expect(argv).toContain("--remote-debugging-port=9303");
    expect(argv).toContain("--hide-crash-restore-bubble");
    expect(argv).toContain("--restore-last-session");
    expect(argv).toContain("--disable-dev-shm-usage");
    expect(argv.at(-1)).toMatch(/^--/); // an existing profile restores its session, no URL
    expect(chromiumArgv(plan, { freshProfile: true }).at(-1)).toBe("about:blank");
  });

  it("Chromium: the lighter process model, with one feature list of each kind (the last one wins)", () => {
    const argv = chromiumArgv(plan, { freshProfile: true, proxyServer: "http://127.0.0.1:3128" });
    const enable = argv.filter((arg) => arg.startsWith("--enable-features="));
    const disable = argv.filter((arg) => arg.startsWith("--disable-features="));
    expect(enable).toEqual(["--enable-features=NetworkServiceInProcess2"]);
    expect(disable).toEqual(["--disable-features=AudioServiceOutOfProcess,SpareRendererForSitePerProcess"]);
    // Site isolation stays on.
    expect(argv.some((arg) => /site-per-process|disable-site-isolation/.test(arg))).toBe(false);
  });

  it("lists stale locks and the profile's Singleton files for cleanup", () => {
    expect(plan.staleFiles).toEqual([
      "/tmp/.X13-lock",
      "/tmp/.X11-unix/X13",
      "/home/user/rakazo-home/.browser-profiles/bot-a/SingletonLock",
      "/home/user/rakazo-home/.browser-profiles/bot-a/SingletonSocket",
      "/home/user/rakazo-home/.browser-profiles/bot-a/SingletonCookie",
    ]);
  });
});

describe("chromiumArgv under a network policy", () => {
  const plan = planStack(layout, { index: 0, generation: 1 }, "/p");
  it("points every bot's Chromium at the egress relay when a proxy is given", () => {
    expect(chromiumArgv(plan, { freshProfile: true, proxyServer: "http://127.0.0.1:3128" })).toContain(
      "--proxy-server=http://127.0.0.1:3128",
    );
  });
  it("passes no proxy flag under none", () => {
    expect(chromiumArgv(plan, { freshProfile: true }).some((arg) => arg.startsWith("--proxy"))).toBe(false);
  });
});
