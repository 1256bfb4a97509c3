/**
 * What the Docker adapter (./docker-provider.ts) is built from: its options, and what a
 * desktop, screen, terminal or process implementation gets to reach one computer.
 */
import type Docker from "dockerode";
import type {
  ExecRequest,
  ExecResult,
  PageBrowser,
  ProviderEventLog,
  SandboxDesktop,
  SandboxProcesses,
  SandboxScreens,
} from "../../provider.ts";
import type { SandboxTerminal } from "../../supervised-terminal.ts";
import type { HostSocketName } from "./host-sockets.ts";

/** What a desktop implementation (the supervisor client) gets to reach one computer. */
export interface DockerDesktopContext {
  readonly ref: string;
  /** Runs a command in the computer as the workspace user (the command path remote providers use). */
  exec(request: ExecRequest): Promise<ExecResult>;
  /**
   * Host path of the computer's `/run/rakazo`. The computer writes there: anything in it may be
   * a planted symlink, so the host never connects through it (tests may, to their own computer).
   */
  hostRuntimeDir(): Promise<string>;
  /**
   * Host path to connect to for the computer's `supervisor.sock` / `gateway.sock`: a verified
   * hard link in the host-owned run dir (host-sockets.ts). `DESKTOP_UNAVAILABLE` when the
   * computer's socket is not a socket (e.g. a symlink to another computer's); errno `ENOENT`
   * when it has none yet.
   */
  hostSocket(name: HostSocketName): Promise<string>;
}

export interface DockerProviderOptions {
  /** Defaults to the local engine at /var/run/docker.sock. */
  readonly docker?: Docker;
  readonly image: string;
  /** Homes live in `<dataDir>/homes/<homeKey>`, runtime dirs in `<dataDir>/run/<slug>`. */
  readonly dataDir: string;
  readonly memoryBytes?: number;
  readonly pidsLimit?: number;
  /** The OCI runtime of computers (default `runc`; `runsc` is gVisor). Egress proxies stay on runc. */
  readonly runtime?: string;
  /** Default CPU bound (NanoCpus); a computer's own sizing wins. Capped at the host's cores. */
  readonly nanoCpus?: number;
  /** Label (and container name) prefix; tests use their own to find and clean up their containers. */
  readonly labelPrefix?: string;
  /** Overrides the image's CMD (the supervisor daemon), e.g. `["sleep","infinity"]` for an image without one. */
  readonly command?: readonly string[];
  /** Extra environment for every computer (e.g. `SANDBOX_TEAM_SCREEN_LIMIT`). */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Wires per-bot desktops (the supervised desktop). Without it the provider declares
   * `capabilities.desktop: false` and sandboxes have no `desktop`.
   */
  readonly desktop?: (context: DockerDesktopContext) => SandboxDesktop;
  /** Wires page tools on the bot's visible Chromium (BRW-1); sets `capabilities.pageBrowser`. */
  readonly pageBrowser?: (context: DockerDesktopContext) => PageBrowser;
  /** Wires the computer's screen gateway (SCR-1), e.g. `createSupervisedScreens` over `<run dir>/gateway.sock`. */
  readonly screens?: (context: DockerDesktopContext) => SandboxScreens;
  /** Wires the browser terminal (TRM-7), e.g. `createSupervisedTerminal`; sets `capabilities.terminal`. */
  readonly terminal?: (context: DockerDesktopContext) => SandboxTerminal;
  readonly log?: ProviderEventLog;
  /**
   * The upstream network of egress proxies; made as a bridge with ICC off when
   * missing. Tests pass a `--internal` network of their own, so nothing leaves the machine.
   */
  readonly egressNetwork?: string;
  /** Private CIDRs the deployment opens to computers' egress (default none). */
  readonly egressPrivateAllow?: readonly string[];
  /** Foreground exec through the supervisor's socket when it listens, else `docker exec`. */
  readonly execThroughSupervisor?: boolean;
  /** Wires background commands (the supervisor's process manager). */
  readonly processes?: (context: DockerDesktopContext) => SandboxProcesses;
  /** Each home on a loop-mounted disk of its own (home-disk.ts; root only). Default off. */
  readonly homeDisks?: boolean;
  /** Default disk size of a home (`homeDisks`); a computer's own sizing wins. */
  readonly diskBytes?: number;
}
