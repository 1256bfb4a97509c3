/**
 * The host provider (PRV-6): computers on this Linux machine, for development without Docker.
 * Each computer is a record in `DATA_DIR/host/machines/`, a workspace in `DATA_DIR/homes/<home
 * key>`, and — while running — one supervisor daemon (the bundled `supervisor.mjs`) in a network
 * namespace of its own, driving the distribution's Xvfb, Chromium and x11vnc. Commands run as
 * this process's user inside that namespace. It is not a sandbox: a command can do whatever this
 * user can (docs/decisions.md, "The host provider"). No browser terminal (TRM-7).
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { lstat, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { userInfo } from "node:os";
import { join } from "node:path";
import { SandboxError } from "../../errors.ts";
import { DIRECTORY_NO_FOLLOW, openBeneath } from "../../no-follow.ts";
import { normalizeWorkspacePath } from "../../paths.ts";
import type {
  ExecRequest,
  ExecResult,
  ProviderCapabilities,
  ProviderEventLog,
  ProvisionRequest,
  ProvisionResult,
  Sandbox,
  SandboxProvider,
  SandboxStatus,
} from "../../provider.ts";
import { createSupervisedDesktop } from "../../supervised-desktop.ts";
import { createSupervisedPageBrowser } from "../../supervised-page-browser.ts";
import { createSupervisedScreens } from "../../supervised-screens.ts";
import { type SupervisorTransport, unixSocketTransport } from "../../supervisor-client.ts";
import { COMPUTER_SIDE, exposeSocket, prepareRunDir } from "../docker/host-sockets.ts";
import { createHostFiles } from "./host-files.ts";
import {
  blockCount,
  blockDisplayBase,
  blocksDir,
  computerEnv,
  DEFAULT_DISPLAY_BASE,
  DEFAULT_DISPLAY_COUNT,
  DEFAULT_HOST_SCREENS,
  type DisplayRange,
  type HostMachinePaths,
  hostSlug,
  launcherArgv,
  machinePaths,
  makeRef,
  nodeBinDir,
  nsenterArgv,
  requestEnv,
  slugOfRef,
  supervisorArgv,
  unshareArgv,
} from "./host-layout.ts";
import { isMarked, killMarked, runCommand } from "./host-process.ts";

export interface HostProviderOptions {
  /** Records in `<dataDir>/host`, workspaces in `<dataDir>/homes/<homeKey>`. */
  readonly dataDir: string;
  /** The supervisor bundle (`infra/sandboxes/image/build.sh --stage-supervisor DIR` writes it). */
  readonly supervisorBundle: string;
  /** Screens per computer; 0 = DEFAULT_HOST_SCREENS (each computer needs a bounded display block). */
  readonly screenLimit?: number;
  /** The Xvfb displays this provider owns: `[displayBase, displayBase + displayCount)`. */
  readonly displayBase?: number;
  readonly displayCount?: number;
  /** Node that runs the supervisor; default this process's. */
  readonly nodePath?: string;
  readonly log?: ProviderEventLog;
}

/** What a machine record holds (host-owned; written atomically). */
interface MachineRecord {
  readonly ref: string;
  readonly computerId: string;
  readonly homeKey: string;
  readonly block: number;
  readonly state: "running" | "stopped";
}

const START_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createHostProvider(options: HostProviderOptions): SandboxProvider {
  const log = options.log ?? (() => {});
  const nodePath = options.nodePath ?? process.execPath;
  const root = process.getuid?.() === 0;
  const perComputer =
    options.screenLimit && options.screenLimit > 0 ? options.screenLimit : DEFAULT_HOST_SCREENS;
  const range: DisplayRange = {
    base: options.displayBase ?? DEFAULT_DISPLAY_BASE,
    count: options.displayCount ?? DEFAULT_DISPLAY_COUNT,
    perComputer,
  };
  if (blockCount(range) < 1) {
    throw new SandboxError(
      "SANDBOX_PROVIDER_ERROR",
      `the display range holds no computer of ${perComputer} screens`,
    );
  }
  const user = userInfo().username;
  const capabilities: ProviderCapabilities = {
    desktop: true,
    pageBrowser: true,
    // TRM-7: the host provider never offers a browser shell (it would be a shell on this host).
    terminal: false,
    billsWhileRunning: false,
    // The workspace is DATA_DIR/homes/<home key> itself, owned by this user (PRV-5).
    mountsHome: true,
    defaultPageBrowser: "sandbox",
    // Only `none` is enforced (a network namespace with nothing but loopback); egress would need
    // the egress proxy the host provider does not have, so it is refused, not ignored.
    networkModes: ["none"],
  };

  // ------------------------------------------------------------------ records

  const recordOf = async (
    ref: string,
  ): Promise<{ record: MachineRecord; paths: HostMachinePaths } | null> => {
    const slug = slugOfRef(ref);
    if (!slug) return null;
    const file = join(options.dataDir, "host", "machines", `${slug}.json`);
    let raw: string;
    try {
      raw = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    const record = JSON.parse(raw) as MachineRecord;
    if (record.ref !== ref) return null;
    return { record, paths: machinePaths(options.dataDir, slug, record.homeKey) };
  };

  const writeRecord = async (paths: HostMachinePaths, record: MachineRecord): Promise<void> => {
    await mkdir(join(paths.record, ".."), { recursive: true, mode: 0o755 });
    const tmp = `${paths.record}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFileExclusive(tmp, `${JSON.stringify(record)}\n`);
    await rename(tmp, paths.record);
  };

  /** Claims the lowest free display block (one file per block, created exclusively). */
  const claimBlock = async (slug: string): Promise<number> => {
    const dir = blocksDir(options.dataDir);
    await mkdir(dir, { recursive: true, mode: 0o755 });
    for (let block = 0; block < blockCount(range); block += 1) {
      try {
        await writeFileExclusive(join(dir, String(block)), slug);
        return block;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if ((await readFile(join(dir, String(block)), "utf8").catch(() => "")) === slug) return block;
      }
    }
    throw new SandboxError(
      "SANDBOX_PROVIDER_ERROR",
      `every display block of :${range.base}–:${range.base + range.count - 1} is taken (${blockCount(range)} computers); destroy one or widen the range`,
    );
  };

  // ------------------------------------------------------------------ supervisor

  const supervisorRunDir = (paths: HostMachinePaths) => join(paths.runDir, COMPUTER_SIDE);

  /** The live supervisor's pid from its own lock file, checked to be this computer's process. */
  const supervisorPid = async (paths: HostMachinePaths, slug: string): Promise<number | null> => {
    const raw = await readFile(join(supervisorRunDir(paths), "supervisor.pid"), "utf8").catch(() => "");
    const pid = Number.parseInt(raw, 10);
    if (!Number.isInteger(pid) || pid <= 1) return null;
    return (await isMarked(pid, slug)) ? pid : null;
  };

  const envOf = (paths: HostMachinePaths, slug: string) =>
    computerEnv({ workspace: paths.homeDir, slug, user, nodeBin: nodeBinDir(nodePath) });

  const transportOf = (paths: HostMachinePaths, slug: string, ref: string): SupervisorTransport =>
    unixSocketTransport(
      () =>
        exposeSocket(paths.runDir, "supervisor.sock", (reason) =>
          log({ event: "host.socket.refused", ref, socket: "supervisor.sock", reason }),
        ),
      { startSupervisor: async () => void (await ensureSupervisor(ref, paths, slug)) },
    );

  /** Starts the computer's supervisor unless it runs; returns its pid once it answers. */
  const ensureSupervisor = async (ref: string, paths: HostMachinePaths, slug: string): Promise<number> => {
    const current = await recordOf(ref);
    if (!current) throw new SandboxError("SANDBOX_GONE", `host machine ${ref} does not exist`);
    if (current.record.state !== "running") {
      throw new SandboxError("SANDBOX_NOT_RUNNING", `host machine ${ref} is stopped`);
    }
    const running = await supervisorPid(paths, slug);
    if (running) return running;
    await lstat(options.supervisorBundle).catch(() => {
      throw new SandboxError(
        "SANDBOX_PROVIDER_ERROR",
        `no supervisor bundle at ${options.supervisorBundle} (infra/sandboxes/image/build.sh --stage-supervisor <dir> writes it)`,
      );
    });
    await prepareRunDir(paths.runDir, { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });
    const argv = [
      ...unshareArgv(root),
      ...supervisorArgv({
        bundle: options.supervisorBundle,
        nodePath,
        supervisorRunDir: supervisorRunDir(paths),
        workspace: paths.homeDir,
        displayBase: blockDisplayBase(range, current.record.block),
        screenLimit: perComputer,
        logDir: join(paths.runDir, "logs"),
      }),
    ];
    const logFile = openSync(join(paths.runDir, "supervisor.log"), "a", 0o600);
    try {
      // Detached: it outlives an API restart and is found again through its pid file.
      const child = spawn(argv[0] as string, argv.slice(1), {
        cwd: "/",
        env: envOf(paths, slug),
        detached: true,
        stdio: ["ignore", logFile, logFile],
      });
      child.on("error", (error) => log({ event: "host.supervisor.spawn_failed", ref, error: error.message }));
      child.unref();
    } finally {
      closeSync(logFile);
    }
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const pid = await supervisorPid(paths, slug);
      const socket = pid ? await exposeSocket(paths.runDir, "supervisor.sock").catch(() => null) : null;
      if (pid && socket) {
        log({ event: "host.supervisor.started", ref, pid });
        return pid;
      }
      if (Date.now() > deadline) {
        const tail = (await readFile(join(paths.runDir, "supervisor.log"), "utf8").catch(() => "")).slice(
          -800,
        );
        throw new SandboxError(
          "DESKTOP_UNAVAILABLE",
          `the supervisor of ${ref} did not start: ${tail.trim()}`,
        );
      }
      await sleep(50);
    }
  };

  /** TERM to the supervisor (it tears its desktops down), then KILL to every process of the computer. */
  const stopProcesses = async (paths: HostMachinePaths, slug: string): Promise<void> => {
    const pid = await supervisorPid(paths, slug);
    if (pid) {
      process.kill(pid, "SIGTERM");
      const deadline = Date.now() + STOP_GRACE_MS;
      while (Date.now() < deadline && (await isMarked(pid, slug))) await sleep(50);
    }
    const killed = await killMarked(slug);
    if (killed > 0) log({ event: "host.processes.killed", slug, count: killed });
  };

  // ------------------------------------------------------------------ provider

  const prepareHome = async (paths: HostMachinePaths): Promise<void> => {
    await mkdir(paths.homeDir, { recursive: true, mode: 0o755 });
    if (!(await lstat(paths.homeDir)).isDirectory()) {
      throw new SandboxError("SANDBOX_PROVIDER_ERROR", `${paths.homeDir} is not a directory`);
    }
  };

  const start = async (record: MachineRecord, paths: HostMachinePaths, slug: string): Promise<void> => {
    await prepareHome(paths);
    await writeRecord(paths, { ...record, state: "running" });
    await ensureSupervisor(record.ref, paths, slug);
  };

  const provider: SandboxProvider = {
    kind: "host",
    capabilities,

    async provision(request: ProvisionRequest): Promise<ProvisionResult> {
      const mode = request.network?.mode ?? "none";
      if (mode !== "none") {
        throw new SandboxError(
          "SANDBOX_UNSUPPORTED",
          `the host provider cannot enforce network mode ${mode} (only none)`,
        );
      }
      const slug = hostSlug(request.computerId);
      const paths = machinePaths(options.dataDir, slug, request.homeKey);
      const existing = await readFile(paths.record, "utf8").then(
        (raw) => JSON.parse(raw) as MachineRecord,
        () => null,
      );
      if (existing && existing.computerId === request.computerId && existing.homeKey === request.homeKey) {
        // The stored ref or not: this computer's machine is found by its record (PRV-3).
        await start(existing, paths, slug);
        return { ref: existing.ref, replaced: false };
      }
      if (existing) await provider.destroy(existing.ref);
      const record: MachineRecord = {
        ref: makeRef(slug, randomBytes(6).toString("hex")),
        computerId: request.computerId,
        homeKey: request.homeKey,
        block: await claimBlock(slug),
        state: "running",
      };
      try {
        await start(record, paths, slug);
      } catch (error) {
        await provider.destroy(record.ref).catch(() => {});
        throw error;
      }
      log({ event: "host.machine.created", computerId: request.computerId, ref: record.ref });
      return { ref: record.ref, replaced: true };
    },

    async stop(ref) {
      const found = await recordOf(ref);
      if (!found) throw new SandboxError("SANDBOX_GONE", `host machine ${ref} does not exist`);
      const slug = slugOfRef(ref) as string;
      await writeRecord(found.paths, { ...found.record, state: "stopped" });
      await stopProcesses(found.paths, slug);
      log({ event: "host.machine.stopped", ref });
    },

    async destroy(ref) {
      const found = await recordOf(ref);
      if (!found) return;
      const slug = slugOfRef(ref) as string;
      await writeRecord(found.paths, { ...found.record, state: "stopped" });
      await stopProcesses(found.paths, slug);
      await rm(found.paths.runDir, { recursive: true, force: true });
      const claim = join(blocksDir(options.dataDir), String(found.record.block));
      if ((await readFile(claim, "utf8").catch(() => "")) === slug) await rm(claim, { force: true });
      // The record last: until it is gone, a retried destroy finds what is left. The home stays.
      await rm(found.paths.record, { force: true });
      log({ event: "host.machine.removed", ref, computerId: found.record.computerId });
    },

    async status(ref): Promise<SandboxStatus> {
      const found = await recordOf(ref);
      if (!found) return "missing";
      return found.record.state;
    },

    sandbox(ref): Sandbox {
      const slug = slugOfRef(ref) ?? "";
      const located = async (): Promise<HostMachinePaths> => {
        const found = await recordOf(ref);
        if (!found) throw new SandboxError("SANDBOX_GONE", `host machine ${ref} does not exist`);
        return found.paths;
      };
      const running = async (): Promise<{ paths: HostMachinePaths; pid: number }> => {
        const paths = await located();
        return { paths, pid: await ensureSupervisor(ref, paths, slug) };
      };

      const exec = async (request: ExecRequest): Promise<ExecResult> => {
        const rel = normalizeWorkspacePath(request.cwd ?? "");
        const { paths, pid } = await running();
        // The working directory is inside the workspace, reached without following a link.
        const dir = await openBeneath(paths.homeDir, rel, DIRECTORY_NO_FOLLOW).catch(
          (error: NodeJS.ErrnoException) => {
            if (error.code === "ELOOP" || error.code === "ENOTDIR") {
              throw new SandboxError(
                "INVALID_PATH",
                `${JSON.stringify(rel)} is not a directory of the workspace`,
              );
            }
            return null; // missing: the launcher reports it like a shell would
          },
        );
        await dir?.close();
        return runCommand({
          argv: [
            ...nsenterArgv(root, pid),
            ...launcherArgv(request.argv, rel === "" ? paths.homeDir : join(paths.homeDir, rel)),
          ],
          env: { ...envOf(paths, slug), ...requestEnv(request.env) },
          ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
          ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
          ...(request.onOutput ? { onOutput: request.onOutput } : {}),
        });
      };

      const transport: SupervisorTransport = {
        async call(method, params) {
          const paths = await located();
          return transportOf(paths, slug, ref).call(method, params);
        },
      };
      return {
        ref,
        exec,
        files: createHostFiles(async () => (await located()).homeDir),
        desktop: createSupervisedDesktop(transport),
        pageBrowser: createSupervisedPageBrowser(transport),
        screens: createSupervisedScreens(transport, async () => {
          const paths = await located();
          return {
            transport: "unix",
            // A verified link in the host-owned run dir (host-sockets.ts), like Docker's.
            socketPath: await exposeSocket(paths.runDir, "gateway.sock"),
          };
        }),
      };
    },
  };
  return provider;
}

async function writeFileExclusive(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx", 0o644);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
