/**
 * The stateful fake computer (PRV-6): the test double and the zero-configuration default.
 *
 * State lives on disk under `rootDir` — one folder per machine holding `machine.json` and the
 * `workspace/` — so the API and the worker, separate processes, see the same machines, and a
 * restart keeps them. Commands run through a tiny built-in shell (./commands.ts); nothing is
 * executed on the host. Desktops render deterministic PNG frames from what was typed and
 * clicked, so observe/act behave like a screen: unchanged state → identical frame. Its gateway
 * serves an emulated shell as the browser terminal (TRM-8, ./terminal-gateway.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { CLOSE_SLOT_CLOSED } from "@rakazo/protocol";
import { appendRevocations, writeGatewayKeys } from "@rakazo/protocol/gateway-core";
import { extractArchive, packDirectory } from "../../archive.ts";
import { SandboxError } from "../../errors.ts";
import { normalizeWorkspacePath } from "../../paths.ts";
import type {
  ActResult,
  DesktopAction,
  DesktopSlotInfo,
  ExecRequest,
  ExecResult,
  FileEntry,
  Observation,
  ProvisionRequest,
  ProvisionResult,
  Sandbox,
  SandboxDesktop,
  SandboxFiles,
  SandboxProvider,
  SandboxScreens,
  SandboxStatus,
} from "../../provider.ts";
import { runFakeCommand } from "./commands.ts";
import { renderFramePng } from "./png.ts";
import { checkFakeTicket, FakeTerminalGateway } from "./terminal-gateway.ts";

export interface FakeProviderOptions {
  /** Where machines are kept, e.g. `DATA_DIR/fake-computers`. */
  readonly rootDir: string;
  /** Caps simultaneous desktops like `SANDBOX_TEAM_SCREEN_LIMIT` (0 = no cap). */
  readonly screenLimit?: number;
  /**
   * Declares `capabilities.mountsHome` (default false: workspaces travel as tar streams). The
   * fake never mounts anything; tests set it to check that services follow the declaration.
   */
  readonly mountsHome?: boolean;
}

interface FakeDesktopState {
  slot: number;
  generation: number;
  log: string[];
  startedAt: string;
  lastUsedAt: string;
  /** How often `closeBrowser` closed this desktop's browser (the slot and frame stay). */
  browserCloses?: number;
}

interface FakeMachine {
  computerId: string;
  homeKey: string;
  state: "running" | "stopped";
  createdAt: string;
  generations: Record<string, number>;
  desktops: Record<string, FakeDesktopState>;
  /** Bots whose browser terminal is started, with the folder their shells start in (TRM-8). */
  terminals?: Record<string, { cwd: string }>;
}

const FRAME_WIDTH = 64;
const FRAME_HEIGHT = 40;

export function createFakeProvider(options: FakeProviderOptions): SandboxProvider {
  const { rootDir } = options;
  const machineDir = (ref: string) => {
    if (!/^fake-[a-z0-9]+$/.test(ref)) throw new SandboxError("SANDBOX_GONE", "no such fake computer");
    return join(rootDir, ref);
  };

  async function load(ref: string): Promise<FakeMachine | undefined> {
    try {
      return JSON.parse(await readFile(join(machineDir(ref), "machine.json"), "utf8")) as FakeMachine;
    } catch {
      return undefined;
    }
  }

  async function save(ref: string, machine: FakeMachine): Promise<void> {
    const file = join(machineDir(ref), "machine.json");
    const tmp = `${file}.${randomBytes(4).toString("hex")}`;
    await writeFile(tmp, JSON.stringify(machine));
    await rename(tmp, file);
  }

  async function running(ref: string): Promise<FakeMachine> {
    const machine = await load(ref);
    if (!machine) throw new SandboxError("SANDBOX_GONE", "the computer no longer exists");
    if (machine.state !== "running") throw new SandboxError("SANDBOX_NOT_RUNNING", "the computer is stopped");
    return machine;
  }

  // The gateways this process hosts, by ref: started by `screens.target()` (the API's authority).
  const gateways = new Map<string, Promise<FakeTerminalGateway>>();
  const hosted = async (ref: string) => gateways.get(ref)?.catch(() => undefined);
  const gatewayFor = (ref: string): Promise<FakeTerminalGateway> => {
    let gateway = gateways.get(ref);
    if (!gateway) {
      const started = new FakeTerminalGateway({
        machineDir: machineDir(ref),
        workspace: join(machineDir(ref), "workspace"),
        load: () => load(ref),
        onClosed: () => gateways.delete(ref),
      });
      gateway = started.start().then(() => started);
      gateway.catch(() => gateways.delete(ref));
      gateways.set(ref, gateway);
    }
    return gateway;
  };

  const provider: SandboxProvider = {
    kind: "fake",
    capabilities: {
      desktop: true,
      pageBrowser: false,
      terminal: true,
      billsWhileRunning: false,
      mountsHome: options.mountsHome ?? false,
      defaultPageBrowser: "fake",
      // The fake has no network at all; it accepts every policy so the control plane (create,
      // setNetwork, the view) can be tested, and the Docker suite tests enforcement.
      networkModes: ["none", "egress", "allowlist"],
    },

    async provision(request: ProvisionRequest): Promise<ProvisionResult> {
      if (request.ref) {
        const existing = await load(request.ref).catch(() => undefined);
        if (existing && existing.computerId === request.computerId) {
          existing.state = "running";
          await save(request.ref, existing);
          return { ref: request.ref, replaced: false };
        }
      }
      const ref = `fake-${randomBytes(8).toString("hex")}`;
      await mkdir(join(machineDir(ref), "workspace"), { recursive: true });
      await save(ref, {
        computerId: request.computerId,
        homeKey: request.homeKey,
        state: "running",
        createdAt: new Date().toISOString(),
        generations: {},
        desktops: {},
      });
      return { ref, replaced: true };
    },

    async stop(ref) {
      const machine = await load(ref);
      if (!machine) throw new SandboxError("SANDBOX_GONE", "the computer no longer exists");
      // Stopping ends every process: desktops go, profiles (workspace files) stay.
      machine.state = "stopped";
      machine.desktops = {};
      machine.terminals = {};
      await save(ref, machine);
      await (await hosted(ref))?.close();
    },

    async destroy(ref) {
      await (await hosted(ref).catch(() => undefined))?.close();
      try {
        await rm(machineDir(ref), { recursive: true, force: true });
      } catch (error) {
        if (!(error instanceof SandboxError)) throw error;
      }
    },

    async status(ref): Promise<SandboxStatus> {
      const machine = await load(ref).catch(() => undefined);
      return machine ? machine.state : "missing";
    },

    sandbox(ref: string): Sandbox {
      const workspace = () => join(machineDir(ref), "workspace");
      const resolvePath = (path: string) => {
        const rel = normalizeWorkspacePath(path);
        return { rel, abs: rel === "" ? workspace() : join(workspace(), rel) };
      };

      const exec = async (request: ExecRequest): Promise<ExecResult> => {
        await running(ref);
        const cwd = resolvePath(request.cwd ?? "").abs;
        const out = { stdout: "", stderr: "" };
        const controller = new AbortController();
        let timedOut = false;
        const timer =
          request.timeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                timedOut = true;
                controller.abort();
              }, request.timeoutMs);
        try {
          const exitCode = await runFakeCommand(request.argv, {
            workspace: workspace(),
            cwd,
            stdin: Buffer.from(request.stdin ?? ""),
            env: { HOME: workspace(), ...request.env },
            signal: controller.signal,
            write: (stream, data) => {
              out[stream] += data;
              request.onOutput?.({ stream, data });
            },
          });
          return timedOut ? { exitCode: 124, ...out, timedOut: true } : { exitCode, ...out, timedOut: false };
        } finally {
          clearTimeout(timer);
        }
      };

      const files: SandboxFiles = {
        async list(path) {
          await running(ref);
          const { rel, abs } = resolvePath(path);
          let names: string[];
          try {
            names = (await readdir(abs)).sort();
          } catch (error) {
            throw fsError(error, path);
          }
          const entries: FileEntry[] = [];
          for (const name of names) {
            const info = await stat(join(abs, name));
            entries.push({
              path: rel === "" ? name : `${rel}/${name}`,
              name,
              type: info.isDirectory() ? "directory" : info.isFile() ? "file" : "other",
              size: info.isFile() ? info.size : 0,
              modifiedAt: info.mtime,
            });
          }
          return entries;
        },
        async read(path, readOptions) {
          await running(ref);
          const { abs } = resolvePath(path);
          try {
            const info = await stat(abs);
            if (info.isDirectory()) throw new SandboxError("FILE_NOT_FOUND", `${path} is a directory`);
            if (readOptions?.maxBytes !== undefined && info.size > readOptions.maxBytes) {
              throw new SandboxError(
                "FILE_TOO_LARGE",
                `${path} is larger than ${readOptions.maxBytes} bytes`,
              );
            }
            return new Uint8Array(await readFile(abs));
          } catch (error) {
            throw fsError(error, path);
          }
        },
        async write(path, data) {
          await running(ref);
          const { rel, abs } = resolvePath(path);
          if (rel === "") throw new SandboxError("INVALID_PATH", "cannot write the workspace root");
          await mkdir(dirname(abs), { recursive: true });
          const tmp = `${abs}.rakazo-${randomBytes(4).toString("hex")}`;
          await writeFile(tmp, data);
          await rename(tmp, abs);
        },
        async exportWorkspace(): Promise<Readable> {
          await running(ref);
          return packDirectory(workspace());
        },
        async importWorkspace(archive) {
          await running(ref);
          await extractArchive(archive, workspace());
        },
      };

      const desktop: SandboxDesktop = {
        async observe(botId): Promise<Observation> {
          const machine = await running(ref);
          const state = ensureDesktop(machine, botId, options.screenLimit ?? 0);
          await save(ref, machine);
          const png = renderFramePng(`${botId}\n${state.log.join("\n")}`, FRAME_WIDTH, FRAME_HEIGHT);
          return {
            png,
            width: FRAME_WIDTH,
            height: FRAME_HEIGHT,
            frameHash: createHash("sha256").update(png).digest("hex"),
            slot: { index: state.slot, generation: state.generation },
          };
        },
        async act(botId, actions: readonly DesktopAction[]): Promise<ActResult> {
          const machine = await running(ref);
          const state = ensureDesktop(machine, botId, options.screenLimit ?? 0);
          let completed = 0;
          for (const action of actions) {
            if (action.type === "wait") {
              await new Promise((done) => setTimeout(done, Math.min(action.ms, 5_000)));
            } else if (action.type === "type" || action.type === "key" || action.type === "click") {
              // Only visible changes go into the log; a pointer move leaves the frame alone.
              state.log.push(JSON.stringify(action));
            }
            completed += 1;
          }
          state.lastUsedAt = new Date().toISOString();
          await save(ref, machine);
          return { completed, total: actions.length };
        },
        async release(botId) {
          const machine = await running(ref);
          delete machine.desktops[botId];
          // Screen teardown stops the bot's terminal too (TRM-6).
          delete machine.terminals?.[botId];
          await save(ref, machine);
          (await hosted(ref))?.stop(botId, CLOSE_SLOT_CLOSED, "slot closed");
        },
        async closeBrowser(botId) {
          const machine = await running(ref);
          const state = machine.desktops[botId];
          if (!state) return;
          // Recorded, nothing else: the slot, its generation and its screen clients stay.
          state.browserCloses = (state.browserCloses ?? 0) + 1;
          await save(ref, machine);
        },
        async list(): Promise<DesktopSlotInfo[]> {
          const machine = await running(ref);
          return Object.entries(machine.desktops).map(([botId, s]) => ({
            botId,
            slot: { index: s.slot, generation: s.generation },
            display: 100 + s.slot,
            startedAt: new Date(s.startedAt),
            lastUsedAt: new Date(s.lastUsedAt),
            controlled: false,
          }));
        },
        // Live desktops only: a fake computer has no cgroup to bound them.
        async capacity() {
          const machine = await running(ref);
          return {
            live: Object.keys(machine.desktops).length,
            limit: options.screenLimit ?? 0,
            memoryUsedBytes: null,
            memoryMaxBytes: null,
            pids: null,
            pidsMax: null,
            desktopMemoryBytes: null,
          };
        },
      };

      const screens: SandboxScreens = {
        async configure(config) {
          await running(ref);
          writeGatewayKeys(machineDir(ref), config);
        },
        async revoke(rules) {
          appendRevocations(machineDir(ref), rules);
          return { closed: (await hosted(ref))?.revoke(rules) ?? 0 };
        },
        async check(ticket) {
          const verdict = checkFakeTicket(machineDir(ref), await load(ref), ticket);
          return verdict.ok ? { ok: true } : { ok: false, reason: verdict.reason };
        },
        async target() {
          await running(ref);
          return (await gatewayFor(ref)).target();
        },
      };

      return {
        ref,
        exec,
        files,
        desktop,
        screens,
        async connectTerminal(request) {
          const machine = await running(ref);
          const cwd = normalizeWorkspacePath(request.cwd);
          machine.terminals = { ...machine.terminals, [request.botId]: { cwd } };
          await save(ref, machine);
          return { sessions: (await hosted(ref))?.sessions(request.botId) ?? 0 };
        },
        async stopTerminal(request) {
          const machine = await load(ref);
          if (machine?.terminals) {
            if (request.botId === undefined) machine.terminals = {};
            else delete machine.terminals[request.botId];
            await save(ref, machine);
          }
          return { closed: (await hosted(ref))?.stop(request.botId) ?? 0 };
        },
      };
    },
  };
  return provider;
}

function ensureDesktop(machine: FakeMachine, botId: string, screenLimit: number): FakeDesktopState {
  const existing = machine.desktops[botId];
  if (existing) return existing;
  const used = new Set(Object.values(machine.desktops).map((d) => d.slot));
  if (screenLimit > 0 && used.size >= screenLimit) {
    throw new SandboxError(
      "MULTI_SCREEN_UNAVAILABLE",
      `all ${screenLimit} screens of this computer are in use`,
    );
  }
  let slot = 0;
  while (used.has(slot)) slot += 1;
  const generation = (machine.generations[slot] ?? 0) + 1;
  machine.generations[slot] = generation;
  const now = new Date().toISOString();
  const state: FakeDesktopState = { slot, generation, log: [], startedAt: now, lastUsedAt: now };
  machine.desktops[botId] = state;
  return state;
}

function fsError(error: unknown, path: string): unknown {
  if (error instanceof SandboxError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new SandboxError("FILE_NOT_FOUND", `${path} does not exist`);
  if (code === "ENOTDIR") return new SandboxError("NOT_A_DIRECTORY", `${path} is not a directory`);
  return error;
}
