// Checkpoints through the whole control plane: a Docker computer whose home is checkpointed into a
// real S3-compatible bucket (PER-4). The bot's Chromium gets a cookie from a page served inside
// the computer, files are written; `computer/stop` quiesces the browser and checkpoints; the
// container AND the local home cache are destroyed, so only the bucket holds the workspace;
// `computer/start` creates a replacement container whose home provision brings back from S3
// (PER-2, PRV-3) → byte-identical files, a writable home and the same browser profile.
// Then the fault drill: a run's checkpoint, and the container deleted
// (`docker rm -f`) under the running computer together with the host's home cache; the next use
// answers COMPUTER_GONE and queues a replacement, which restores that checkpoint byte-identically
// with the cookie intact. Its recovery time goes to the bench report. A run-end checkpoint
// closes only the browser: a viewer watching the bot's screen through the gateway stays
// connected across it and keeps receiving frames (CMP-6).
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { openRfb } from "@rakazo/bench/rfb-client";
import { viaWebSocketRaw } from "@rakazo/bench/rfb-stream";
import { ObjectAgentHomeStore } from "@rakazo/homes";
import { startTestS3Server, type TestS3Server } from "@rakazo/homes/testing";
import { TICKET_HEADER } from "@rakazo/protocol";
import { createProvider, DOCKER_HOME_GID, DOCKER_HOME_UID } from "@rakazo/sandbox";
import { authorizeScreen } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { recordFigures } from "../support/figures.ts";
import { buildSupervisorOverlay } from "../support/supervisor-overlay.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("a Docker home restored from the bucket");

const PORT = 18_765;
const COOKIE = `rkz=${Math.random().toString(36).slice(2, 12)}`;
// Set by /late just before a run ends: still only in the browser's memory when the run ends.
const LATE_COOKIE = `late=${Math.random().toString(36).slice(2, 12)}`;
// A plaintext that must not appear in the sealed object (repeated so a match is unmistakable).
const KNOWN = "rakazo-known-plaintext-0123456789abcdef|".repeat(100);

// Serves /set (sets a persistent cookie) and /check; logs "<path> <Cookie header>" per request.
const FIXTURE_SERVER = `
const http = require("node:http");
const fs = require("node:fs");
http.createServer((req, res) => {
  fs.appendFileSync("/tmp/fixture.log", req.url + " " + (req.headers.cookie ?? "-") + "\\n");
  const headers = { "content-type": "text/html" };
  if (req.url === "/set") headers["set-cookie"] = "${COOKIE}; Max-Age=86400; Path=/; SameSite=Lax";
  if (req.url === "/late") headers["set-cookie"] = "${LATE_COOKIE}; Max-Age=86400; Path=/; SameSite=Lax";
  res.writeHead(200, headers);
  res.end("<title>fixture</title><h1>" + req.url + "</h1>");
}).listen(${PORT}, "127.0.0.1");
`;

describe.skipIf(gate.skip)(gate.title, () => {
  let s3: TestS3Server;
  let store: ObjectAgentHomeStore;
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;
  let overlay: ReturnType<typeof buildSupervisorOverlay> | undefined;

  beforeAll(async () => {
    s3 = await startTestS3Server();
    // This checkout's supervisor (the run-end checkpoint's desktop.closeBrowser) on the image.
    overlay = buildSupervisorOverlay(COMPUTER_IMAGE);
    const image = overlay.image;
    system = await createTestSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image, dataDir }),
      homes: (dataDir) => {
        // As createRuntime builds it for a provider declaring `capabilities.homeOwner` (Docker).
        store = new ObjectAgentHomeStore({
          dataDir,
          storage: s3.storage,
          owner: { uid: DOCKER_HOME_UID, gid: DOCKER_HOME_GID },
        });
        return store;
      },
      screens: true,
    });
    await system.startWorker();
    tenant = await system.newTenant("home-user");
    computerId = await runningComputer(system, tenant);
  }, 180_000);

  afterAll(async () => {
    if (system) {
      const row = await computerRow();
      await system.rpc("computer/delete", { computerId }, tenant.token);
      await eventually(
        async () => ((await computerRow())?.state === "deleted" ? true : undefined),
        60_000,
      ).catch(() => {});
      if (row?.providerRef) await system.provider.destroy(row.providerRef).catch(() => {});
      await system.close();
    }
    await s3?.close();
    overlay?.remove();
  }, 120_000);

  const computerRow = () =>
    system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });

  const exec = async (script: string) => {
    const res = await system.rpc("computer/exec", { computerId, argv: ["bash", "-c", script] }, tenant.token);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const result = res.json.result as { exitCode: number; stdout: string; stderr: string };
    expect(result.exitCode, `${script}\n${result.stderr}`).toBe(0);
    return result.stdout;
  };

  /** `fencingToken`: the bot's run's, while a run drives it. */
  const act = async (actions: unknown[], fencingToken?: number) => {
    const res = await system.rpc(
      "computer/act",
      { computerId, botId: tenant.botId, actions, ...(fencingToken === undefined ? {} : { fencingToken }) },
      tenant.token,
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  };

  /**
   * Opens `path` of the fixture server in the bot's Chromium and waits for the request. Typing
   * into the omnibox is retried: on a loaded host a restored browser (its last session
   * reopening) can swallow the first attempt, and what is under test is the cookie it sends.
   */
  const visit = async (path: string, fencingToken?: number) => {
    // observe brings the bot's desktop (and its Chromium) up.
    const observed = await system.rpc(
      "computer/observe",
      { computerId, botId: tenant.botId, ...(fencingToken === undefined ? {} : { fencingToken }) },
      tenant.token,
    );
    expect(observed.status, JSON.stringify(observed.json)).toBe(200);
    const requested = () =>
      eventually(async () => {
        const log = await exec("cat /tmp/fixture.log 2>/dev/null || true");
        const line = log.split("\n").find((l) => l.startsWith(`${path} `));
        return line?.slice(path.length + 1);
      }, 15_000);
    for (let attempt = 1; ; attempt += 1) {
      await act(
        [
          { type: "key", keys: "ctrl+l" },
          { type: "type", text: `http://127.0.0.1:${PORT}${path}` },
          { type: "key", keys: "Return" },
        ],
        fencingToken,
      );
      try {
        return await requested();
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  };

  const startFixtureServer = async () => {
    await exec(`setsid -f node -e '${FIXTURE_SERVER}' >/tmp/fixture.out 2>&1 </dev/null`);
    await eventually(async () => {
      const res = await system.rpc(
        "computer/exec",
        {
          computerId,
          argv: ["node", "-e", `fetch("http://127.0.0.1:${PORT}/ping").then(()=>0,()=>process.exit(1))`],
        },
        tenant.token,
      );
      return res.json.result?.exitCode === 0 ? true : undefined;
    });
  };

  const WRITE_FILES = [
    "mkdir -p docs/deep/er",
    "head -c 3000000 /dev/urandom > docs/blob.bin",
    "head -c 70000 /dev/urandom > docs/deep/er/small.bin",
    "printf '' > docs/empty.txt",
    `printf '%s' '${KNOWN}' > notes.txt`,
    "chmod 0750 docs/blob.bin",
  ].join(" && ");
  /** Every workspace file's hash, browser profiles aside. */
  const TREE =
    "set -eo pipefail; find . -path ./.browser-profiles -prune -o -type f -print0 | sort -z | xargs -0 sha256sum";
  const FINGERPRINT =
    "set -eo pipefail; find . -path ./.browser-profiles -prune -o -type f -print0 | sort -z | xargs -0 sha256sum; stat -c '%a %n' docs/blob.bin";

  it("keeps files and the browser profile through a replacement restored from S3", async () => {
    // Before: a cookie from a page served inside the computer, and some files.
    await startFixtureServer();
    expect(await visit("/set")).toBe("-");
    await exec(WRITE_FILES);
    const before = await exec(FINGERPRINT);
    expect(before).toContain("notes.txt");
    expect(before).toContain("docs/deep/er/small.bin");

    // Stop: quiesce the browser (flushes its cookies), checkpoint into the bucket, stop.
    const stopped = await system.rpc("computer/stop", { computerId }, tenant.token);
    expect(stopped.status, JSON.stringify(stopped.json)).toBe(200);
    const row = await eventually(async () => {
      const current = await computerRow();
      return current?.state === "stopped" ? current : undefined;
    }, 90_000);
    expect(row.homeRevision).toBeGreaterThan(0);

    // The stored object is sealed: a known file's bytes are nowhere in it.
    const chunks: Buffer[] = [];
    await store.download(
      row.homeKey,
      row.homeRevision,
      new Writable({
        write(chunk, _encoding, done) {
          chunks.push(chunk);
          done();
        },
      }),
    );
    const sealed = Buffer.concat(chunks);
    expect(sealed.subarray(0, 4).toString()).toBe("RKZH");
    expect(sealed.length).toBeGreaterThan(3_000_000);
    expect(sealed.includes(Buffer.from(KNOWN.slice(0, 64)))).toBe(false);

    // Only the bucket holds the workspace: no container, no local home.
    if (!row.providerRef) throw new Error("the stopped computer has no container ref");
    await system.provider.destroy(row.providerRef);
    expect(await system.provider.status(row.providerRef)).toBe("missing");
    await rm(store.homeDir(row.homeKey), { recursive: true, force: true });

    // Start: a replacement container, its home brought back from S3 before it starts.
    const started = await system.rpc("computer/start", { computerId }, tenant.token);
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    const restarted = await eventually(async () => {
      const current = await computerRow();
      return current?.state === "running" ? current : undefined;
    }, 90_000);
    expect(restarted.providerRef).not.toBe(row.providerRef);

    expect(await exec(FINGERPRINT)).toBe(before);
    // The workspace user owns what was restored: it can write everywhere in it.
    await exec("touch docs/deep/er/new.txt && rm docs/blob.bin && test -w .browser-profiles");

    // The browser profile survived: the cookie set before is sent on a revisit.
    await startFixtureServer();
    expect(await visit("/check")).toBe(COOKIE);
  });

  /** Deletes the computer's container and the host's home cache; waits for the replacement. */
  const replaceMachine = async (saved: { providerRef: string | null; homeKey: string }) => {
    await promisify(execFile)("docker", ["rm", "-f", saved.providerRef as string]);
    await rm(store.homeDir(saved.homeKey), { recursive: true, force: true });
    const use = await system.rpc("computer/exec", { computerId, argv: ["true"] }, tenant.token);
    expect(use.status, JSON.stringify(use.json)).toBe(409);
    expect(use.json.error.code).toBe("COMPUTER_GONE");
    return eventually(async () => {
      const current = await computerRow();
      if (current?.state === "failed") throw new Error(`replacement failed: ${current.lastError}`);
      return current?.state === "running" ? current : undefined;
    }, 120_000);
  };

  /**
   * A person watching the bot's screen: a view capability (`computer/screenUrl`), authorized as
   * the web service's proxy has it authorized, and an RFB viewer on the computer's gateway
   * asking for every change. Counts the frame updates; `closed` is set when its websocket ends.
   */
  const watchScreen = async () => {
    const res = await system.rpc(
      "computer/screenUrl",
      { computerId, botId: tenant.botId, policy: "view" },
      tenant.token,
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const capability = new URL(res.json.result.url).pathname.split("/")[2] as string;
    const { target, ticket } = await authorizeScreen(system.ctx, { capability });
    if (target.transport !== "unix") throw new Error(`a Docker gateway on ${target.transport}`);
    const stream = await viaWebSocketRaw({
      socketPath: target.socketPath,
      path: "/v1/rfb",
      headers: { [TICKET_HEADER]: ticket },
    });
    const viewer = { updates: 0, closed: false, session: await openRfb(stream) };
    stream.onClose(() => {
      viewer.closed = true;
    });
    viewer.session.onUpdate(() => {
      viewer.updates += 1;
      if (!viewer.closed) viewer.session.request(true);
    });
    viewer.session.request(false);
    await eventually(async () => (viewer.updates > 0 ? true : undefined));
    return viewer;
  };

  it("a cookie set the moment before a run ends survives a replacement restored from its checkpoint (PER-7)", async () => {
    // The browser is running (CMP-6 keeps it across runs): the run's last act sets a cookie,
    // and the run ends right after, well inside Chromium's 30 s cookie write batching.
    await startFixtureServer();
    const start = await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token);
    expect(start.status, JSON.stringify(start.json)).toBe(200);
    const { run, lease } = start.json.result;
    const previous = (await computerRow())?.homeRevision ?? 0;
    await visit("/late", lease.fencingToken);
    // Someone watches the screen through the run's end (CMP-6: the viewer stays).
    const viewer = await watchScreen();
    const completed = await system.rpc(
      "run/complete",
      { runId: run.id, fencingToken: lease.fencingToken },
      tenant.token,
    );
    expect(completed.status, JSON.stringify(completed.json)).toBe(200);
    const saved = await eventually(async () => {
      const current = await computerRow();
      return current && current.homeRevision > previous ? current : undefined;
    }, 60_000);
    // The bot's browser is back after the checkpoint (CMP-6), without being asked for.
    await eventually(async () => {
      const slots = await system.provider.sandbox(saved.providerRef as string).desktop?.list();
      return slots?.some((slot) => slot.botId === tenant.botId) ? true : undefined;
    }, 30_000);

    // Logged once the relaunch has returned: what closing and relaunching cost.
    const relaunched = await eventually(async () =>
      system.logLines
        .map((line) => JSON.parse(line) as { msg?: string; closeMs: number; relaunchMs: number })
        .find((line) => line.msg === "computer.browsers_relaunched"),
    );
    // The viewer's websocket is the one it opened before the run ended, still served: typing
    // into the relaunched browser reaches it as frame updates.
    expect(viewer.closed).toBe(false);
    const seen = viewer.updates;
    await act([
      { type: "key", keys: "ctrl+l" },
      { type: "type", text: "still watching" },
    ]);
    await eventually(async () => (viewer.updates > seen || viewer.closed ? true : undefined));
    expect(viewer.closed).toBe(false);
    viewer.session.close();
    recordFigures("run-end-quiesce", [
      { name: "run-end checkpoint: browsers closed (1 desktop)", value: relaunched.closeMs, unit: "ms" },
      {
        name: "run-end checkpoint: browsers relaunched (1 desktop)",
        value: relaunched.relaunchMs,
        unit: "ms",
      },
    ]);

    const replaced = await replaceMachine(saved);
    expect(replaced.homeRevision).toBe(saved.homeRevision);
    await startFixtureServer();
    expect((await visit("/check")).split("; ")).toContain(LATE_COOKIE);
  });

  it("drill: a container deleted under the live computer is replaced on next use and restored", async () => {
    // The last checkpoint: a run ends and its checkpoint saves the workspace (PER-2).
    await exec("echo drill > drill.txt");
    const before = await exec(TREE);
    const start = await system.rpc("run/start", { computerId, botId: tenant.botId }, tenant.token);
    expect(start.status, JSON.stringify(start.json)).toBe(200);
    const { run, lease } = start.json.result;
    const previous = (await computerRow())?.homeRevision ?? 0;
    await system.rpc("run/complete", { runId: run.id, fencingToken: lease.fencingToken }, tenant.token);
    const saved = await eventually(async () => {
      const current = await computerRow();
      return current && current.homeRevision > previous ? current : undefined;
    }, 60_000);

    // The machine goes: its container, and the host's home cache with it (only S3 is left).
    const deleted = performance.now();
    const deletedAt = new Date();
    await promisify(execFile)("docker", ["rm", "-f", saved.providerRef as string]);
    await rm(store.homeDir(saved.homeKey), { recursive: true, force: true });

    // The next use finds it gone and queues the replacement.
    const use = await system.rpc("computer/exec", { computerId, argv: ["true"] }, tenant.token);
    expect(use.status, JSON.stringify(use.json)).toBe(409);
    expect(use.json.error.code).toBe("COMPUTER_GONE");
    const replaced = await eventually(async () => {
      const current = await computerRow();
      if (current?.state === "failed") throw new Error(`replacement failed: ${current.lastError}`);
      return current?.state === "running" ? current : undefined;
    }, 120_000);
    const recoveredMs = performance.now() - deleted;
    expect(replaced.providerRef).not.toBe(saved.providerRef);
    expect(replaced.homeRevision).toBe(saved.homeRevision);
    expect(await exec(TREE)).toBe(before);
    await startFixtureServer();
    // The earlier test's late cookie rides along.
    expect((await visit("/check")).split("; ")).toContain(COOKIE);

    const provisions = await system.ctx.db.query.computerOperations.findMany({
      where: (o, { and, eq, gt }) =>
        and(eq(o.computerId, computerId), eq(o.kind, "provision"), gt(o.createdAt, deletedAt)),
    });
    expect(provisions.map((o) => o.status)).toEqual(["succeeded"]);
    recordFigures("drill-machine-deleted", [
      {
        name: "machine deleted → replacement running (Docker, restored from S3)",
        value: Math.round(recoveredMs),
        unit: "ms",
      },
      { name: "replacement provisions", value: provisions.length, unit: "operations", target: "= 1" },
      {
        name: "revisions lost",
        value: saved.homeRevision - replaced.homeRevision,
        unit: "revisions",
        target: "= 0",
      },
    ]);
  });
});
