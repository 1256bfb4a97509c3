/**
 * How a new remote machine gets its supervisor daemon, as shell text (pure; unit-tested in
 * supervisor-start.test.ts, run for real by the provider suites on the emulators).
 *
 * What must stay true:
 * - the bundle that runs is one whose bytes were just checked against the host's sha256, in the
 *   same command that runs it: the uploaded content-addressed file, or a copy the machine's image
 *   carries (a template, snapshot or type built from the computer image). A file's presence
 *   decides nothing; a copy that fails the check is passed over and the host uploads its own.
 * - a daemon already running (one the image's boot command started) is kept only when its
 *   command line is exactly `node <checked bundle> serve <the host's flags>` and its environment
 *   carries exactly the host's desktop admission settings; any other daemon is stopped and ours
 *   started in its place.
 * - one Node start: the daemon is started directly (detached with `setsid`), not through the
 *   command path's CLI, which would boot Node a second time to start it.
 * - the command prints the daemon's RPC key (the socket is listened on only after the key is
 *   written, infra/sandboxes/supervisor/src/daemon/daemon.ts), so the channel opens without
 *   another file read.
 */
import type { SupervisorTransport } from "../supervisor-client.ts";
import { quote } from "./shell.ts";

/** Exit when no candidate holds the host's bundle: the host uploads it and runs the start again. */
const BUNDLE_MISSING = 97;
/** Exit when no daemon listened in time. */
const DAEMON_NOT_LISTENING = 98;
/** Exit when the listening daemon is not the one the checks accepted (another daemon won the lock). */
const DAEMON_MISMATCH = 99;

/** Environment names that change the daemon's desktop admission; compared on a running daemon. */
const SETTING_ENV = "^(RAKAZO_DESKTOP_|SANDBOX_TEAM_SCREEN_LIMIT=)";

export interface DaemonSettings {
  readonly runDir: string;
  readonly workspace: string;
  readonly gatewayPort: number;
  readonly screenLimit: number;
  /** `NAME=value` entries of the desktop admission settings, in the daemon's environment. */
  readonly admissionEnv: readonly string[];
}

/** The daemon's flags after `serve`: also what a template's boot command must pass. */
export function daemonFlags(settings: DaemonSettings): string[] {
  return [
    "--run-dir",
    settings.runDir,
    "--workspace",
    settings.workspace,
    "--gateway-listen",
    `tcp:0.0.0.0:${settings.gatewayPort}`,
    "--screen-limit",
    String(settings.screenLimit),
  ];
}

/**
 * The boot command of a template/snapshot/type whose image carries the bundle at `bundlePath`:
 * it starts the daemon as the runtime would, so provision finds it running. For operators
 * (docs/providers.md) and the emulators' templates.
 */
export function supervisorBootCommand(
  settings: DaemonSettings & { readonly node?: string; readonly bundlePath: string },
): string[] {
  const env = settings.admissionEnv.length > 0 ? ["env", ...settings.admissionEnv] : [];
  const argv = [...env, settings.node ?? "node", settings.bundlePath, "serve", ...daemonFlags(settings)];
  const run = quote(settings.runDir);
  return [
    "sh",
    "-c",
    `mkdir -p -- ${run} ${quote(settings.workspace)} && exec "$@" </dev/null >>${run}/supervisor.log 2>&1`,
    "sh",
    ...argv,
  ];
}

interface StartScriptOptions extends DaemonSettings {
  readonly node: string;
  /** sha256 (hex) of the host's bundle. */
  readonly hash: string;
  /** Absolute paths that may hold the bundle, tried in order. */
  readonly candidates: readonly string[];
  /** Directories to make first (the workspace, `~/.rakazo`). */
  readonly dirs: readonly string[];
  /** Shell run before everything (moving an uploaded bundle into place); must succeed. */
  readonly before?: string;
}

/** The whole start as one shell script: check, keep or start the daemon, print its key. */
function startScript(options: StartScriptOptions): string {
  const run = options.runDir;
  const pidFile = quote(`${run}/supervisor.pid`);
  const socket = quote(`${run}/supervisor.sock`);
  const keyFile = quote(`${run}/rpc.key`);
  const flags = daemonFlags(options).map(quote).join(" ");
  const env = options.admissionEnv.length > 0 ? `env ${options.admissionEnv.map(quote).join(" ")} ` : "";
  const wantEnv = [...options.admissionEnv].sort().map(quote).join(" ");
  return [
    "set -u",
    ...(options.before ? [`${options.before} || exit 1`] : []),
    `mkdir -p -- ${[...options.dirs, run].map(quote).join(" ")} || exit 1`,
    "B=",
    `for P in ${options.candidates.map(quote).join(" ")}; do`,
    `  if echo "${options.hash}  $P" | sha256sum --check --status - 2>/dev/null; then B=$P; break; fi`,
    "done",
    `[ -n "$B" ] || exit ${BUNDLE_MISSING}`,
    // What a daemon of this bundle with these settings shows in /proc (argv after `node`).
    `want=$(printf '%s\\n' "$B" serve ${flags})`,
    `wantenv=$(printf '%s\\n' ${wantEnv} | grep -E '${SETTING_ENV}' | sort)`,
    `ours() { [ -n "$1" ] && [ "$(tr '\\0' '\\n' < /proc/$1/cmdline 2>/dev/null | tail -n +2)" = "$want" ] && [ "$(tr '\\0' '\\n' < /proc/$1/environ 2>/dev/null | grep -E '${SETTING_ENV}' | sort)" = "$wantenv" ]; }`,
    // Daemons of this run dir, listening or still booting (a template's boot command may have
    // started one a moment ago and not yet taken the lock): found by their command lines.
    `daemons() { for p in /proc/[0-9]*; do p=\${p#/proc/}; [ "$p" != $$ ] && tr '\\0' '\\n' < /proc/$p/cmdline 2>/dev/null | sed -n 3p | grep -qx serve && tr '\\0' '\\n' < /proc/$p/cmdline 2>/dev/null | grep -qxF -- ${quote(run)} && echo "$p"; done; }`,
    "keep=; stray=",
    `for p in $(daemons); do if [ -z "$keep" ] && ours "$p"; then keep=$p; else stray="$stray $p"; fi; done`,
    `if [ -n "$stray" ]; then kill $stray 2>/dev/null; i=0; while [ $i -lt 150 ] && kill -0 $stray 2>/dev/null; do sleep 0.02; i=$((i+1)); done; kill -9 $stray 2>/dev/null; fi`,
    `if [ -z "$keep" ]; then`,
    `  rm -f -- ${socket}`,
    `  setsid ${env}${quote(options.node)} "$B" serve ${flags} </dev/null >>${quote(`${run}/supervisor.log`)} 2>&1 &`,
    "fi",
    `i=0; until [ -S ${socket} ]; do [ $i -lt 750 ] || exit ${DAEMON_NOT_LISTENING}; sleep 0.02; i=$((i+1)); done`,
    `ours "$(cat ${pidFile} 2>/dev/null || true)" || exit ${DAEMON_MISMATCH}`,
    `cat ${keyFile}`,
  ].join("\n");
}

export interface SupervisorStartDeps {
  readonly settings: DaemonSettings & { readonly node: string };
  readonly bundle: { readonly bytes: Uint8Array; readonly path: string; readonly hash: string };
  /** Where the machine's image may carry the bundle (a template built from the computer image). */
  readonly inImage?: string;
  readonly dirs: readonly string[];
  /** Runs shell text in the machine (through the runtime's exec). */
  readonly run: (script: string) => Promise<{ exitCode: number; stdout: string; stderr: string }>;
  readonly writeFile: (path: string, bytes: Uint8Array) => Promise<void>;
  /** The command path's `health`, which starts a daemon by the CLI: the fallback. */
  readonly viaCommandPath: () => Promise<unknown>;
  readonly randomSuffix: () => string;
}

/**
 * Starts the daemon of a machine made just now, returning its RPC key when the start printed
 * one. With `inImage`, first without an upload; then (or without it) uploads the bundle and
 * starts that. A start that failed otherwise goes once more by the command path.
 */
export async function startOnNewMachine(deps: SupervisorStartDeps): Promise<string | undefined> {
  const { bundle } = deps;
  const attempt = (candidates: readonly string[], before?: string) =>
    deps.run(
      startScript({
        ...deps.settings,
        hash: bundle.hash,
        candidates,
        dirs: deps.dirs,
        ...(before !== undefined ? { before } : {}),
      }),
    );
  let result = deps.inImage === undefined ? undefined : await attempt([bundle.path, deps.inImage]);
  if (result === undefined || result.exitCode === BUNDLE_MISSING) {
    // Uploaded to /tmp, moved beside the bundle's path, then renamed over it: a CLI starting
    // meanwhile reads the old bundle or the new, never half of one.
    const suffix = deps.randomSuffix();
    const uploaded = `/tmp/.rakazo-supervisor-${suffix}.mjs`;
    const staged = `${bundle.path}.${suffix}`;
    await deps.writeFile(uploaded, bundle.bytes);
    result = await attempt(
      [bundle.path],
      `mkdir -p -- ${deps.dirs.map(quote).join(" ")} && mv -f -- ${quote(uploaded)} ${quote(staged)} && chmod 0644 -- ${quote(staged)} && mv -f -- ${quote(staged)} ${quote(bundle.path)}`,
    );
  }
  if (result.exitCode === 0) return result.stdout.trim();
  await deps.viaCommandPath();
  return undefined;
}

/**
 * Starts the daemon of a machine that existed before (resumed, found again): the command path's
 * `health` behind an sha256 check of the installed bundle, so a daemon already running answers
 * without a second start; `install` when the machine lacks this very bundle. A start that
 * outlived the CLI's wait is retried once.
 */
export async function startOnKnownMachine(deps: {
  readonly bundle: { readonly path: string; readonly hash: string };
  readonly dirs: readonly string[];
  /** The command path with `prelude` run first; `onExit` sees the CLI's exit code. */
  readonly commandPath: (prelude?: string, onExit?: (code: number) => void) => SupervisorTransport;
  readonly install: () => Promise<void>;
}): Promise<void> {
  const { path, hash } = deps.bundle;
  let missing = false;
  const installed = `echo ${quote(`${hash}  ${path}`)} | sha256sum --check --status - 2>/dev/null || exit ${BUNDLE_MISSING}`;
  try {
    await deps
      .commandPath(`mkdir -p -- ${deps.dirs.map(quote).join(" ")} && { ${installed}; }`, (code) => {
        missing = code === BUNDLE_MISSING;
      })
      .call("health", {})
      .catch((error: unknown) => {
        if (missing) throw error;
        return deps.commandPath().call("health", {});
      });
  } catch (error) {
    if (!missing) throw error;
    await deps.install();
  }
}
