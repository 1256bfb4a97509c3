/**
 * Pure builders for the host provider (PRV-6): refs, host paths, display blocks, the computer's
 * environment and the argv that puts a command into the computer's network namespace. No I/O
 * here, so each invariant is unit-tested without Xvfb or Chromium.
 */
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { SandboxError } from "../../errors.ts";
import { persistentToolEnv } from "../../tool-env.ts";

/** Every process of a computer carries this variable (value: its slug); stop/destroy sweep by it. */
export const COMPUTER_MARKER = "RAKAZO_HOST_COMPUTER";

/** Screens per computer when the deployment sets no `SANDBOX_TEAM_SCREEN_LIMIT` (0 = none). */
export const DEFAULT_HOST_SCREENS = 4;
/** Xvfb displays the host provider may use, unless configured: `:1100`–`:1499`. */
export const DEFAULT_DISPLAY_BASE = 1100;
export const DEFAULT_DISPLAY_COUNT = 400;

/** A short, stable, path-safe id for a computer (socket paths must stay under 108 bytes). */
export function hostSlug(computerId: string): string {
  return createHash("sha256").update(computerId).digest("hex").slice(0, 12);
}

const REF = /^host-([0-9a-f]{12})-([0-9a-f]{12})$/;

/** `host-<slug>-<nonce>`: one machine of one computer; a replacement gets a new nonce. */
export function makeRef(slug: string, nonce: string): string {
  const ref = `host-${slug}-${nonce}`;
  if (!REF.test(ref)) throw new SandboxError("SANDBOX_PROVIDER_ERROR", `malformed host ref ${ref}`);
  return ref;
}

/** The computer's slug, or null for anything that is not a host ref (then: missing). */
export function slugOfRef(ref: string): string | null {
  return REF.exec(ref)?.[1] ?? null;
}

export interface HostMachinePaths {
  /** `<dataDir>/host/machines/<slug>.json`: the machine record (host-owned). */
  readonly record: string;
  /** `<dataDir>/host/run/<slug>`: host-owned; its `computer/` child is the supervisor's run dir. */
  readonly runDir: string;
  /** `<dataDir>/homes/<homeKey>`: the workspace, owned by the home store (PRV-5, PER-3). */
  readonly homeDir: string;
}

export function machinePaths(dataDir: string, slug: string, homeKey: string): HostMachinePaths {
  return {
    record: join(dataDir, "host", "machines", `${slug}.json`),
    runDir: join(dataDir, "host", "run", slug),
    homeDir: join(dataDir, "homes", homeKeySegment(homeKey)),
  };
}

/** Where display-block claims live: one file per claimed block, holding the slug. */
export function blocksDir(dataDir: string): string {
  return join(dataDir, "host", "displays");
}

/** A home key becomes one path segment under `homes/`; anything that could leave it is refused. */
function homeKeySegment(homeKey: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(homeKey) || homeKey.includes("..")) {
    throw new SandboxError("INVALID_PATH", `invalid home key: ${JSON.stringify(homeKey)}`);
  }
  return homeKey;
}

export interface DisplayRange {
  readonly base: number;
  readonly count: number;
  /** Displays per computer (its screen cap). */
  readonly perComputer: number;
}

/** How many computers the range holds at once. */
export function blockCount(range: DisplayRange): number {
  return Math.floor(range.count / range.perComputer);
}

/** The first display of block `block`. */
export function blockDisplayBase(range: DisplayRange, block: number): number {
  if (!Number.isInteger(block) || block < 0 || block >= blockCount(range)) {
    throw new SandboxError("SANDBOX_PROVIDER_ERROR", `display block ${block} is outside the range`);
  }
  return range.base + block * range.perComputer;
}

/**
 * The environment of every process of a computer: nothing of the host process's own environment
 * (it holds the database URL and keys), the workspace as HOME, and the tool dirs that survive a
 * replacement (PRV-5). `nodeBin` puts the host's node on PATH.
 */
export function computerEnv(options: {
  readonly workspace: string;
  readonly slug: string;
  readonly user: string;
  readonly nodeBin: string;
}): Record<string, string> {
  const tools = persistentToolEnv(options.workspace);
  return {
    ...tools,
    HOME: options.workspace,
    USER: options.user,
    LOGNAME: options.user,
    LANG: "C.UTF-8",
    RAKAZO_WORKSPACE: options.workspace,
    PATH: `${options.workspace}/.local/bin:${options.nodeBin}:/usr/local/bin:/usr/bin:/bin`,
    [COMPUTER_MARKER]: options.slug,
  };
}

/** Validates a request's environment: names a shell can carry, no NUL bytes. */
export function requestEnv(env: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || value.includes("\0")) {
      throw new SandboxError("SANDBOX_PROVIDER_ERROR", `invalid environment variable ${JSON.stringify(key)}`);
    }
    // The marker says which computer a process belongs to; a command cannot choose it.
    if (key === COMPUTER_MARKER) continue;
    out[key] = value;
  }
  return out;
}

/**
 * The network namespace (mode `none`): the supervisor starts in a new one (`unshare`)
 * whose loopback is brought up before it execs, so its desktops see only a loopback of their
 * own; commands join it (`nsenter`), so they share that loopback with the bot's browser and
 * nothing else. As root a plain network namespace; as another user the namespace belongs to an
 * unprivileged user namespace in which that user is mapped to uid 0 (so commands see `id -u` 0;
 * what they create is owned by the user outside).
 */
export function unshareArgv(root: boolean): string[] {
  return [
    ...(root ? ["unshare", "--net", "--"] : ["unshare", "--user", "--map-root-user", "--net", "--"]),
    "/bin/sh",
    "-c",
    'ip link set lo up || exit 70; exec "$@"',
    "rakazo-net",
  ];
}

export function nsenterArgv(root: boolean, pid: number): string[] {
  if (!Number.isInteger(pid) || pid <= 1) throw new SandboxError("SANDBOX_PROVIDER_ERROR", `bad pid ${pid}`);
  return root
    ? ["nsenter", `--net=/proc/${pid}/ns/net`, "--"]
    : ["nsenter", `--user=/proc/${pid}/ns/user`, `--net=/proc/${pid}/ns/net`, "--preserve-credentials", "--"];
}

const LAUNCHER = 'cd -- "$1" || exit 1; shift; exec "$@"';

/** The user's argv behind a tiny launcher: never parsed by a shell; 127 for an unknown command. */
export function launcherArgv(argv: readonly string[], cwd: string): string[] {
  if (argv.length === 0) throw new SandboxError("SANDBOX_PROVIDER_ERROR", "exec needs a non-empty argv");
  return ["/bin/sh", "-c", LAUNCHER, "rakazo-exec", cwd, ...argv];
}

export interface SupervisorLaunch {
  readonly bundle: string;
  readonly nodePath: string;
  /** `<runDir>/computer`. */
  readonly supervisorRunDir: string;
  readonly workspace: string;
  readonly displayBase: number;
  readonly screenLimit: number;
  readonly logDir: string;
}

/**
 * `node supervisor.mjs serve …` for one computer. The cgroup is the host's, not the computer's,
 * so admission runs on the screen cap alone (`--cgroup-root=off`).
 */
export function supervisorArgv(launch: SupervisorLaunch): string[] {
  return [
    launch.nodePath,
    launch.bundle,
    "serve",
    `--run-dir=${launch.supervisorRunDir}`,
    `--workspace=${launch.workspace}`,
    `--display-base=${launch.displayBase}`,
    // Chromium's DevTools ports are in the computer's own network namespace: no clash between computers.
    "--debug-port-base=9300",
    `--screen-limit=${launch.screenLimit}`,
    `--log-dir=${launch.logDir}`,
    "--cgroup-root=off",
  ];
}

/** True when a process's NUL-separated environ carries this computer's marker. */
export function environHasMarker(environ: Buffer, slug: string): boolean {
  const needle = Buffer.from(`${COMPUTER_MARKER}=${slug}\0`);
  return environ.subarray(0, needle.length).equals(needle) || environ.includes(Buffer.from(`\0${needle}`));
}

export function nodeBinDir(nodePath: string): string {
  return dirname(nodePath);
}
