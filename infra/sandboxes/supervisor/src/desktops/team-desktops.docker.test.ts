/**
 * VER-4: Team desktops in a real, network-isolated computer container.
 *
 *   VERIFY_DOCKER_TEAM_SCREENS=1 pnpm exec vitest run infra/sandboxes/supervisor/src/team-desktops.docker.test.ts
 *
 * Image from RAKAZO_COMPUTER_IMAGE (default rakazo-computer:latest, built by
 * infra/sandboxes/image/build.sh); engine from scripts/docker-engine.sh. One container
 * (`--network none`, made by the Docker provider) serves fixture sites on its own loopback. The
 * same scenario runs through Docker supervision (HTTP over the bind-mounted supervisor socket)
 * and the command path (the supervisor CLI through `docker exec`): parallel desktops, cookies
 * independent per bot, a bot's cookies surviving release and a reopen on another slot, viewers
 * disconnected by teardown, and the old RFB socket path reaching nothing after slot reuse; and
 * view/control tokens minted for a slot refused by the gateway once the slot serves another bot.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  commandTransport,
  createSupervisedDesktop,
  createSupervisedScreens,
  type Sandbox,
  type SandboxProvider,
  type SupervisedDesktop,
  unixSocketTransport,
} from "@rakazo/sandbox";
import { createDockerProvider, type DockerDesktopContext } from "@rakazo/sandbox/docker";
import { DOCKER_RUNTIME, requireDocker } from "@rakazo/sandbox/testing";
import {
  gatewayKeysFor,
  gatewayTicket,
  generateScreenKeys,
  mintScreenCapability,
  parseScreenKeys,
  type ScreenPolicy,
} from "@rakazo/screens";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TICKET_HEADER } from "../gateway/vocabulary.ts";

// Opt-in for a plain `vitest run` (it takes minutes); `./rakazo test` and CI=true always run it, and
// then a missing engine or image fails under CI=true (@rakazo/sandbox/testing).
const ENABLED =
  (process.env.VERIFY_DOCKER_TEAM_SCREENS === "1" || process.env.CI === "true") &&
  !(await requireDocker(`team desktops (VER-4, ${DOCKER_RUNTIME})`)).skip;
const IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";
const RUN_DIR_IN_COMPUTER = "/run/rakazo";
const FIXTURE_PORTS = [8081, 8082];
const SITE_A = "http://127.0.0.1:8081";
const SITE_B = "http://localhost:8082";

/** The fixture: two "sites" on the computer's loopback; a cookie per first visit; every request logged. */
const FIXTURE_SERVER = `
const http = require("node:http"), fs = require("node:fs");
for (const port of ${JSON.stringify(FIXTURE_PORTS)}) {
  http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const nonce = url.searchParams.get("nonce") || "";
    const cookie = req.headers.cookie || "";
    const headers = { "content-type": "text/html" };
    // Only complete visits count: the omnibox fetches speculatively (favicon, preconnect, a
    // half-typed URL); those must neither be logged nor set a cookie.
    if (url.pathname === "/visit" && /-[0-9a-f]{8}$/.test(nonce)) {
      fs.appendFileSync("/tmp/fixture.jsonl", JSON.stringify({ port, nonce, cookie }) + "\\n");
      if (!/visitor=/.test(cookie)) headers["set-cookie"] = "visitor=" + nonce + "; Max-Age=86400; Path=/";
    }
    res.writeHead(200, headers);
    res.end("<h1>site " + port + "</h1><p>cookie: " + cookie.replace(/[<>&]/g, "") + "</p>");
  }).listen(port, "127.0.0.1");
}
`;

interface Viewer {
  readonly greeting: Promise<string>;
  /** Resolves when the RFB server closes the connection. */
  readonly closed: Promise<void>;
}

describe.skipIf(!ENABLED)(
  ENABLED
    ? `team desktops in ${IMAGE} under ${DOCKER_RUNTIME}`
    : "team desktops (VER-4) — skipped: set VERIFY_DOCKER_TEAM_SCREENS=1",
  () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "rakazo-ver4-"));
    const labelPrefix = `rakazo-ver4-${randomBytes(3).toString("hex")}`;
    const contexts = new Map<string, DockerDesktopContext>();
    let provider: SandboxProvider;
    let sandbox: Sandbox;
    let ref = "";
    let hostRunDir = "";

    const run = async (argv: string[], timeoutMs = 120_000) => {
      const result = await sandbox.exec({ argv, timeoutMs });
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    };

    /** Waits for the fixture to log the visit with this nonce; returns the Cookie header it got. */
    const cookieSentWith = async (nonce: string): Promise<string> => {
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const log = await run(["sh", "-c", "cat /tmp/fixture.jsonl 2>/dev/null || true"]);
        for (const line of log.stdout.split("\n").filter(Boolean)) {
          const entry = JSON.parse(line) as { nonce: string; cookie: string };
          if (entry.nonce === nonce) return entry.cookie;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`the fixture never saw a visit with nonce ${nonce}`);
    };

    /** Drives the bot's visible Chromium to a fixture URL: ctrl+l, type, Return. */
    const visit = async (desktop: SupervisedDesktop, botId: string, origin: string): Promise<string> => {
      const nonce = `${botId}-${randomBytes(4).toString("hex")}`;
      const result = await desktop.act(botId, [
        { type: "key", keys: "ctrl+l" },
        { type: "type", text: `${origin}/visit?nonce=${nonce}` },
        // Drops any inline autocompletion the omnibox appended to what was typed.
        { type: "key", keys: "Delete" },
        { type: "key", keys: "Return" },
      ]);
      expect(result).toEqual({ completed: 4, total: 4 });
      return nonce;
    };

    beforeAll(async () => {
      execFileSync("docker", ["image", "inspect", IMAGE], { stdio: "ignore" }); // fails loudly: build the image first
      provider = createDockerProvider({
        image: IMAGE,
        dataDir,
        labelPrefix,
        runtime: DOCKER_RUNTIME,
        desktop: (context) => {
          contexts.set(context.ref, context);
          return createSupervisedDesktop(
            commandTransport((argv) => context.exec({ argv, timeoutMs: 120_000 })),
          );
        },
      });
      ({ ref } = await provider.provision({
        computerId: `ver4-${labelPrefix}`,
        mode: "team",
        homeKey: `ver4-${labelPrefix}`,
      }));
      console.error(`VER-4 container ${ref}, data dir ${dataDir}`);
      sandbox = provider.sandbox(ref);
      // Isolated: no network but the computer's own loopback.
      expect(
        execFileSync("docker", ["inspect", "-f", "{{.HostConfig.NetworkMode}}", ref], {
          encoding: "utf8",
        }).trim(),
      ).toBe("none");
      const context = contexts.get(ref);
      if (!context) throw new Error("the provider did not wire a desktop");
      hostRunDir = await context.hostRuntimeDir();
      await run([
        "sh",
        "-c",
        `cat > /tmp/fixture.cjs <<'EOF'\n${FIXTURE_SERVER}\nEOF\nnohup node /tmp/fixture.cjs >/tmp/fixture.out 2>&1 &`,
      ]);
      // The fixture starts in the background: probe each site until it answers (re-running the
      // probe every time), and fail here, not later in a visit, if it never does.
      for (const port of FIXTURE_PORTS) {
        const probe = () =>
          run([
            "node",
            "-e",
            `fetch("http://127.0.0.1:${port}/probe").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`,
          ]);
        let attempts = 1;
        while ((await probe()).exitCode !== 0) {
          if (attempts++ >= 50) throw new Error(`fixture site on port ${port} never answered`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }, 180_000);

    afterAll(async () => {
      if (ref) {
        const logs = await run(["sh", "-c", "cat /run/rakazo/supervisor.log 2>/dev/null | tail -20"]).catch(
          () => null,
        );
        if (logs?.stdout) console.error(`supervisor log of ${ref}:\n${logs.stdout}`);
        await provider.destroy(ref);
      }
      rmSync(dataDir, { recursive: true, force: true });
    }, 120_000);

    const transports = [
      {
        name: "Docker supervision",
        desktop: () => createSupervisedDesktop(unixSocketTransport(path.join(hostRunDir, "supervisor.sock"))),
        /** A viewer on the host, through the bind-mounted run dir. */
        connect(socketInComputer: string): Viewer {
          const socket = net.connect(socketInComputer.replace(RUN_DIR_IN_COMPUTER, hostRunDir));
          const greeting = new Promise<string>((resolve, reject) => {
            socket.once("data", (data: Buffer) => resolve(data.toString("latin1")));
            socket.once("error", reject);
          });
          const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
          return { greeting, closed };
        },
      },
      {
        name: "the command path",
        desktop: () => sandbox.desktop as SupervisedDesktop,
        /** A viewer inside the computer, started through exec. */
        connect(socketInComputer: string): Viewer {
          const script = `const s=require("net").connect(${JSON.stringify(socketInComputer)});
            s.once("data",d=>console.log("greeting "+d.toString("latin1").trim()));
            s.on("error",e=>{console.log("error "+e.code);process.exit(0)});
            s.on("close",()=>{console.log("closed");process.exit(0)});
            setTimeout(()=>{console.log("still-open");process.exit(0)},60000);`;
          let greet: (line: string) => void = () => undefined;
          const greeting = new Promise<string>((resolve) => {
            greet = resolve;
          });
          let seen = "";
          const output = sandbox
            .exec({
              argv: ["node", "-e", script],
              timeoutMs: 90_000,
              onOutput: (chunk) => {
                seen += chunk.data;
                const line = seen
                  .split("\n")
                  .find((l) => l.startsWith("greeting ") || l.startsWith("error "));
                if (line) greet(line);
              },
            })
            .then((result) => result.stdout);
          void output.then((out) => greet(out.split("\n")[0] ?? ""));
          const closed = output.then((out) => {
            if (!out.includes("closed")) throw new Error(`viewer was not disconnected: ${out}`);
          });
          closed.catch(() => undefined); // only awaited for viewers that did connect
          return { greeting, closed };
        },
      },
    ];

    /** The gateway's answer to `GET /v1/screen` with this ticket, as the web proxy asks it. */
    const gatewayStatus = (ticket: string) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request({
          socketPath: path.join(hostRunDir, "gateway.sock"),
          path: "/v1/screen",
          headers: { [TICKET_HEADER]: ticket },
          agent: false,
          timeout: 10_000,
        });
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on("timeout", () => request.destroy(new Error("gateway timed out")));
        request.on("error", reject);
        request.end();
      });

    it("view and control tokens minted for a slot are refused once the slot is reused by another bot", async () => {
      const desktop = createSupervisedDesktop(unixSocketTransport(path.join(hostRunDir, "supervisor.sock")));
      const screens = createSupervisedScreens(
        unixSocketTransport(path.join(hostRunDir, "supervisor.sock")),
        async () => ({ transport: "unix", socketPath: path.join(hostRunDir, "gateway.sock") }),
      );
      const keyring = parseScreenKeys(generateScreenKeys("k1"));
      const computerId = `cmp_${"v".repeat(20)}`;
      await screens.configure(gatewayKeysFor(keyring, computerId));
      const ticketFor = (botId: string, slot: { index: number; generation: number }, policy: ScreenPolicy) =>
        gatewayTicket(
          keyring,
          mintScreenCapability(keyring, {
            computerId,
            botId,
            slot: slot.index,
            generation: slot.generation,
            policy,
            subject: "usr_ver4",
            ttlMs: 10 * 60_000,
            now: Date.now(),
          }).claims,
        );

      const first = await desktop.observe("tok-a");
      const old = [ticketFor("tok-a", first.slot, "view"), ticketFor("tok-a", first.slot, "control")];
      for (const ticket of old) {
        expect(await screens.check(ticket)).toEqual({ ok: true });
        expect(await gatewayStatus(ticket)).toBe(200);
      }

      // Tear down, and another bot takes the same slot (next generation).
      await desktop.release("tok-a");
      const next = await desktop.observe("tok-b");
      expect(next.slot).toEqual({ index: first.slot.index, generation: first.slot.generation + 1 });
      for (const ticket of old) {
        expect(await screens.check(ticket)).toEqual({ ok: false, reason: "slot_gone" });
        expect(await gatewayStatus(ticket)).toBe(410);
      }
      // The new bot's own tokens work: the refusal is about the old generation, not the slot.
      for (const policy of ["view", "control"] as const) {
        expect(await gatewayStatus(ticketFor("tok-b", next.slot, policy))).toBe(200);
      }
      await desktop.release("tok-b");
    }, 120_000);

    for (const transport of transports) {
      it(`runs parallel bot desktops with independent, persistent cookies through ${transport.name}`, async (t) => {
        // Does not pass reliably under runsc on this shared 2-core host (docs/security.md,
        // "gVisor", with the runs): at a load average of 15-30 a command-path observe of three
        // bots at once outlasted the host's 120 s call bound, and a reopened bot's typed visit
        // was lost. One desktop at a time works (the test above, the contract's).
        if (DOCKER_RUNTIME === "runsc")
          t.skip("three bots started at once under runsc on a loaded 2-core host (docs/security.md)");
        const desktop = transport.desktop();
        const tag = transport.name === "Docker supervision" ? "dk" : "cmd";
        const bots = [`${tag}-a`, `${tag}-b`, `${tag}-c`];

        // Three desktops start in parallel, each in its own slot.
        const first = await Promise.all(bots.map((bot) => desktop.observe(bot)));
        expect(new Set(first.map((o) => o.slot.index)).size).toBe(3);
        const listed = await desktop.list();
        for (const bot of bots)
          expect(listed.some((slot) => slot.botId === bot && slot.state === "running")).toBe(true);

        // First visits: fresh profiles send no cookie; the site sets visitor=<nonce>.
        const firstVisits = await Promise.all(bots.map((bot) => visit(desktop, bot, SITE_A)));
        for (const nonce of firstVisits) expect(await cookieSentWith(nonce)).toBe("");
        // Second visits: each bot sends only its own cookie.
        const secondVisits = await Promise.all(bots.map((bot) => visit(desktop, bot, SITE_A)));
        for (const [i, nonce] of secondVisits.entries()) {
          expect(await cookieSentWith(nonce)).toBe(`visitor=${firstVisits[i]}`);
        }
        // A second site (another host name; cookies ignore ports) has no cookie yet.
        expect(await cookieSentWith(await visit(desktop, bots[1] as string, SITE_B))).toBe("");

        // Release with a viewer connected: the viewer is disconnected, the socket is gone.
        const [a] = bots as [string];
        const before = (await desktop.list()).find((slot) => slot.botId === a);
        if (!before) throw new Error(`${a} is not listed`);
        // Desktops start without x11vnc; dialling the socket directly needs it started first.
        await desktop.openScreen(a);
        const viewer = transport.connect(before.vncSocket);
        expect(await viewer.greeting).toMatch(/RFB 003\.00\d/);
        await desktop.release(a);
        await viewer.closed;
        expect((await desktop.list()).some((slot) => slot.botId === a)).toBe(false);

        // Slot reuse: the next bot gets the slot with a new generation and a new socket; the
        // old socket path reaches nothing.
        const reuser = `${tag}-d`;
        const reused = await desktop.observe(reuser);
        expect(reused.slot).toEqual({ index: before.slot.index, generation: before.slot.generation + 1 });
        const reusedInfo = (await desktop.list()).find((slot) => slot.botId === reuser);
        expect(reusedInfo?.vncSocket).not.toBe(before.vncSocket);
        const stale = transport.connect(before.vncSocket);
        await expect(
          stale.greeting.then(
            (text) => text,
            (error: NodeJS.ErrnoException) => `error ${error.code}`,
          ),
        ).resolves.toBe("error ENOENT");
        await desktop.openScreen(reuser);
        expect(await transport.connect(reusedInfo?.vncSocket ?? "").greeting).toMatch(/RFB 003\.00\d/);

        // The released bot reopens on a different slot with its profile: its cookie survived.
        const reopened = await desktop.observe(a);
        expect(reopened.slot.index).not.toBe(before.slot.index);
        expect(await cookieSentWith(await visit(desktop, a, SITE_A))).toBe(`visitor=${firstVisits[0]}`);

        for (const bot of [...bots, reuser]) await desktop.release(bot);
        expect((await desktop.list()).filter((slot) => slot.botId.startsWith(`${tag}-`))).toEqual([]);
      }, 240_000);
    }
  },
);
