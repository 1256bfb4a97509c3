// The host's path to a computer's socket never follows anything the
// computer wrote. A symlink at each component of `<dataDir>/run/<slug>/computer/<name>` is
// refused, and only the computer's own socket inode is ever handed out.
import { spawn } from "node:child_process";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  rename,
  rm,
  stat,
  symlink,
  unlink,
  writeFile,
} from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isSandboxError } from "../../errors.ts";
import {
  COMPUTER_SIDE,
  createSocketExposer,
  exposeSocket,
  prepareRunDir,
  type SocketRefusal,
} from "./host-sockets.ts";

const owner = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };

async function listen(path: string): Promise<net.Server> {
  const server = net.createServer((socket) => socket.end(`hello from ${path}`));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

function greeting(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path);
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString();
    });
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => "accepted",
    (error: unknown) =>
      isSandboxError(error) ? error.code : ((error as NodeJS.ErrnoException).code ?? String(error)),
  );
}

describe("exposeSocket (host-side path to a computer's socket)", () => {
  let dataDir: string;
  let runDir: string;
  let victimDir: string;
  const servers: net.Server[] = [];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-host-sockets-"));
    runDir = join(dataDir, "run", "attacker");
    await prepareRunDir(runDir, owner);
    victimDir = await prepareRunDir(join(dataDir, "run", "victim"), owner);
    servers.push(await listen(join(victimDir, "supervisor.sock")));
  });

  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it("hands out a host-owned link to the computer's own socket", async () => {
    const own = join(runDir, COMPUTER_SIDE, "supervisor.sock");
    servers.push(await listen(own));
    const exposed = await exposeSocket(runDir, "supervisor.sock");
    expect(exposed).toBe(join(runDir, "supervisor.sock"));
    expect((await lstat(exposed)).isSocket()).toBe(true);
    expect((await stat(exposed)).ino).toBe((await stat(own)).ino);
    expect(await greeting(exposed)).toBe(`hello from ${own}`);
    // Nothing but the link is left behind in the host-owned dir.
    expect((await readdir(runDir)).sort()).toEqual([COMPUTER_SIDE, "supervisor.sock"]);
  });

  it("a missing socket is ENOENT (not listening yet), so the supervisor can be started", async () => {
    expect(await refusal(exposeSocket(runDir, "supervisor.sock"))).toBe("ENOENT");
  });

  it("refuses a symlink planted at the socket name, and says why", async () => {
    await symlink(join(victimDir, "supervisor.sock"), join(runDir, COMPUTER_SIDE, "supervisor.sock"));
    const reasons: SocketRefusal[] = [];
    expect(await refusal(exposeSocket(runDir, "supervisor.sock", (r) => reasons.push(r)))).toBe(
      "DESKTOP_UNAVAILABLE",
    );
    expect(reasons).toEqual(["not_a_socket"]);
    expect((await readdir(runDir)).sort()).toEqual([COMPUTER_SIDE]);
  });

  it("refuses a regular file at the socket name", async () => {
    await writeFile(join(runDir, COMPUTER_SIDE, "gateway.sock"), "not a socket");
    expect(await refusal(exposeSocket(runDir, "gateway.sock"))).toBe("DESKTOP_UNAVAILABLE");
  });

  it("refuses a symlink at the computer's side of the run dir", async () => {
    await rm(join(runDir, COMPUTER_SIDE), { recursive: true });
    await symlink(victimDir, join(runDir, COMPUTER_SIDE));
    const reasons: SocketRefusal[] = [];
    expect(await refusal(exposeSocket(runDir, "supervisor.sock", (r) => reasons.push(r)))).toBe(
      "DESKTOP_UNAVAILABLE",
    );
    expect(reasons).toEqual(["unsafe_directory"]);
  });

  it("refuses a symlink at the run dir itself", async () => {
    await rm(runDir, { recursive: true });
    await symlink(join(dataDir, "run", "victim"), runDir);
    expect(await refusal(exposeSocket(runDir, "supervisor.sock"))).toBe("DESKTOP_UNAVAILABLE");
    // No link to the victim's socket was made in the victim's own host dir either.
    expect((await readdir(join(dataDir, "run", "victim"))).sort()).toEqual([COMPUTER_SIDE]);
  });

  it("refuses a symlink at <dataDir>/run", async () => {
    const real = join(dataDir, "real-run");
    await mkdir(real, { mode: 0o755 });
    await rm(join(dataDir, "run"), { recursive: true });
    await symlink(real, join(dataDir, "run"));
    expect(await refusal(exposeSocket(join(dataDir, "run", "x"), "supervisor.sock"))).toBe(
      "DESKTOP_UNAVAILABLE",
    );
  });

  it("refuses a host-owned run dir that others may write", async () => {
    servers.push(await listen(join(runDir, COMPUTER_SIDE, "supervisor.sock")));
    await chmod(runDir, 0o777);
    expect(await refusal(exposeSocket(runDir, "supervisor.sock"))).toBe("DESKTOP_UNAVAILABLE");
  });

  it("never hands out the victim's socket while the computer swaps symlink and socket (TOCTOU)", async () => {
    const own = join(runDir, COMPUTER_SIDE, "supervisor.sock");
    servers.push(await listen(own));
    const ownIno = (await stat(own)).ino;
    // Another process flips the name between the real socket and a symlink to the victim's.
    const script = `
      const fs = require("node:fs");
      const own = ${JSON.stringify(own)}, parked = own + ".real", link = own + ".link";
      fs.symlinkSync(${JSON.stringify(join(victimDir, "supervisor.sock"))}, link);
      fs.linkSync(own, parked);
      const end = Date.now() + 1500;
      while (Date.now() < end) { fs.linkSync(link, own + ".tmp"); fs.renameSync(own + ".tmp", own); fs.linkSync(parked, own + ".tmp"); fs.renameSync(own + ".tmp", own); }
    `;
    const child = spawn(process.execPath, ["-e", script], { stdio: "inherit" });
    const done = new Promise((resolve) => child.on("exit", resolve));
    let handedOut = 0;
    let refused = 0;
    const started = Date.now();
    while (Date.now() - started < 1200) {
      try {
        const exposed = await exposeSocket(runDir, "supervisor.sock");
        const info = await lstat(exposed);
        expect(info.isSocket()).toBe(true);
        expect(info.ino).toBe(ownIno);
        handedOut += 1;
      } catch (error) {
        if (!isSandboxError(error) && (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        refused += 1;
      }
    }
    await done;
    console.log(`race: ${handedOut} handed out (own socket), ${refused} refused`);
    expect(handedOut + refused).toBeGreaterThan(10);
  });
});

describe("createSocketExposer (linked once per socket, re-checked by inode on every call)", () => {
  let dataDir: string;
  let runDir: string;
  let victimDir: string;
  let links: number;
  let own: string;
  const servers: net.Server[] = [];
  const exposer = () => createSocketExposer({ onLinked: () => (links += 1) });

  beforeEach(async () => {
    links = 0;
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-host-sockets-"));
    runDir = join(dataDir, "run", "attacker");
    own = join(await prepareRunDir(runDir, owner), "supervisor.sock");
    victimDir = await prepareRunDir(join(dataDir, "run", "victim"), owner);
    servers.push(await listen(join(victimDir, "supervisor.sock")));
  });

  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it("links the running computer's socket once across many calls", async () => {
    servers.push(await listen(own));
    const sockets = exposer();
    const exposed = await Promise.all(
      Array.from({ length: 5 }, () => sockets.expose(runDir, "supervisor.sock")),
    );
    for (let i = 0; i < 20; i++) exposed.push(await sockets.expose(runDir, "supervisor.sock"));
    expect(new Set(exposed)).toEqual(new Set([join(runDir, "supervisor.sock")]));
    expect(links).toBe(1);
    expect((await stat(join(runDir, "supervisor.sock"))).ino).toBe((await stat(own)).ino);
    expect(await greeting(join(runDir, "supervisor.sock"))).toBe(`hello from ${own}`);
  });

  it("links again when a restarted supervisor planted a new socket", async () => {
    const first = await listen(own);
    const sockets = exposer();
    const exposed = await sockets.expose(runDir, "supervisor.sock");
    await new Promise((resolve) => first.close(resolve));
    // The restarted daemon: a new socket inode under the same name, with a new greeting.
    const next = net.createServer((socket) => socket.end("hello from the restarted supervisor"));
    await new Promise<void>((resolve) => next.listen(own, resolve));
    servers.push(next);
    expect(await sockets.expose(runDir, "supervisor.sock")).toBe(exposed);
    expect(links).toBe(2);
    expect((await stat(exposed)).ino).toBe((await stat(own)).ino);
    expect(await greeting(exposed)).toBe("hello from the restarted supervisor");
    await sockets.expose(runDir, "supervisor.sock");
    expect(links).toBe(2);
  });

  it("links again when the host link is gone (the run dir was made anew)", async () => {
    servers.push(await listen(own));
    const sockets = exposer();
    const exposed = await sockets.expose(runDir, "supervisor.sock");
    await unlink(exposed);
    expect(await sockets.expose(runDir, "supervisor.sock")).toBe(exposed);
    expect(links).toBe(2);
    expect(await greeting(exposed)).toBe(`hello from ${own}`);
  });

  it("refuses, on the next call and every one after, a socket the computer swapped for a symlink", async () => {
    servers.push(await listen(own));
    const sockets = exposer();
    await sockets.expose(runDir, "supervisor.sock");
    await rename(own, `${own}.parked`);
    await symlink(join(victimDir, "supervisor.sock"), own);
    const reasons: SocketRefusal[] = [];
    for (let i = 0; i < 3; i++) {
      expect(await refusal(sockets.expose(runDir, "supervisor.sock", (r) => reasons.push(r)))).toBe(
        "DESKTOP_UNAVAILABLE",
      );
    }
    expect(reasons).toEqual(["not_a_socket", "not_a_socket", "not_a_socket"]);
    expect(links).toBe(1);
    // The host link still holds the computer's own (parked) socket, never the victim's.
    expect((await lstat(join(runDir, "supervisor.sock"))).ino).toBe((await lstat(`${own}.parked`)).ino);
  });

  it("hands out only the computer's own socket while it swaps symlink and socket between calls", async () => {
    servers.push(await listen(own));
    const ownIno = (await stat(own)).ino;
    const victimIno = (await stat(join(victimDir, "supervisor.sock"))).ino;
    const sockets = exposer();
    const script = `
      const fs = require("node:fs");
      const own = ${JSON.stringify(own)}, parked = own + ".real", link = own + ".link";
      fs.symlinkSync(${JSON.stringify(join(victimDir, "supervisor.sock"))}, link);
      fs.linkSync(own, parked);
      const end = Date.now() + 1000;
      while (Date.now() < end) { fs.linkSync(link, own + ".tmp"); fs.renameSync(own + ".tmp", own); fs.linkSync(parked, own + ".tmp"); fs.renameSync(own + ".tmp", own); }
    `;
    const child = spawn(process.execPath, ["-e", script], { stdio: "inherit" });
    const done = new Promise((resolve) => child.on("exit", resolve));
    let handedOut = 0;
    const started = Date.now();
    while (Date.now() - started < 800) {
      try {
        const info = await lstat(await sockets.expose(runDir, "supervisor.sock"));
        expect(info.ino).toBe(ownIno);
        expect(info.ino).not.toBe(victimIno);
        handedOut += 1;
      } catch (error) {
        if (!isSandboxError(error) && (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    await done;
    expect(handedOut).toBeGreaterThan(0);
  });

  it("refuses a socket the computer swapped for a regular file", async () => {
    servers.push(await listen(own));
    const sockets = exposer();
    await sockets.expose(runDir, "supervisor.sock");
    await rm(own);
    await writeFile(own, "not a socket");
    expect(await refusal(sockets.expose(runDir, "supervisor.sock"))).toBe("DESKTOP_UNAVAILABLE");
  });

  it("refuses a symlink swapped in at the computer's side of the run dir", async () => {
    servers.push(await listen(own));
    const sockets = exposer();
    await sockets.expose(runDir, "supervisor.sock");
    // Only the host can do this (the directory is host-owned); the inode check still catches it.
    await rename(join(runDir, COMPUTER_SIDE), join(runDir, "parked"));
    await symlink(victimDir, join(runDir, COMPUTER_SIDE));
    expect(await refusal(sockets.expose(runDir, "supervisor.sock"))).toBe("DESKTOP_UNAVAILABLE");
  });
});
