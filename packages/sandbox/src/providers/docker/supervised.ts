/**
 * The Docker provider as the system runs it: desktops driven by the in-computer supervisor
 * through its Unix socket in the bind-mounted run dir ("Docker supervision", CMP-8), started
 * on demand through the command path if the daemon is not listening yet.
 */
import Docker from "dockerode";
import { desktopAdmissionEnv } from "../../desktop-admission.ts";
import type { SandboxProvider } from "../../provider.ts";
import type { DockerProviderConfig, ProviderHooks } from "../../registry.ts";
import { createSupervisedDesktop } from "../../supervised-desktop.ts";
import { createSupervisedPageBrowser } from "../../supervised-page-browser.ts";
import { createSupervisedProcesses } from "../../supervised-processes.ts";
import { createSupervisedScreens } from "../../supervised-screens.ts";
import { createSupervisedTerminal } from "../../supervised-terminal.ts";
import {
  SUPERVISOR_CLI_COMMAND,
  type SupervisorTransport,
  unixSocketTransport,
} from "../../supervisor-client.ts";
import type { DockerDesktopContext } from "./docker-options.ts";
import { createDockerProvider } from "./docker-provider.ts";

/**
 * Every call re-resolves the socket through `hostSocket` (a verified link in the host-owned run
 * dir, checked by inode and made again when it changed, host-sockets.ts), so a supervisor that
 * restarted is found again and a socket the computer replaced by a symlink is refused on the
 * next call.
 */
function supervisorTransport(context: DockerDesktopContext): SupervisorTransport {
  return unixSocketTransport(() => context.hostSocket("supervisor.sock"), {
    // The CLI starts the daemon when it is not running, then answers `health`.
    startSupervisor: async () => {
      await context.exec({ argv: [...SUPERVISOR_CLI_COMMAND, "health", "{}"], timeoutMs: 30_000 });
    },
  });
}

export function createSupervisedDockerProvider(
  config: DockerProviderConfig,
  hooks: ProviderHooks = {},
): SandboxProvider {
  return createDockerProvider({
    ...(hooks.log ? { log: hooks.log } : {}),
    docker: new Docker({ socketPath: config.socketPath ?? "/var/run/docker.sock" }),
    image: config.image,
    dataDir: config.dataDir,
    ...(config.runtime !== undefined ? { runtime: config.runtime } : {}),
    ...(config.memoryBytes !== undefined ? { memoryBytes: config.memoryBytes } : {}),
    ...(config.pidsLimit !== undefined ? { pidsLimit: config.pidsLimit } : {}),
    ...(config.nanoCpus !== undefined ? { nanoCpus: config.nanoCpus } : {}),
    ...(config.egressNetwork !== undefined ? { egressNetwork: config.egressNetwork } : {}),
    ...(config.egressPrivateAllow !== undefined ? { egressPrivateAllow: config.egressPrivateAllow } : {}),
    ...(config.homeDisks ? { homeDisks: true } : {}),
    ...(config.diskBytes !== undefined ? { diskBytes: config.diskBytes } : {}),
    environment: {
      SANDBOX_TEAM_SCREEN_LIMIT: String(config.screenLimit ?? 0),
      ...desktopAdmissionEnv(config.desktopAdmission),
    },
    desktop: (context) => createSupervisedDesktop(supervisorTransport(context)),
    // The bot's visible Chromium tab through the supervisor's page methods (BRW-1).
    pageBrowser: (context) => createSupervisedPageBrowser(supervisorTransport(context)),
    // One gateway per computer, on a Unix socket in the bind-mounted run dir (SCR-1), handed out
    // as its verified link in the host-owned run dir.
    screens: (context) =>
      createSupervisedScreens(supervisorTransport(context), async () => ({
        transport: "unix",
        // Host-owned path: the web proxy connects to it without resolving anything of the computer's.
        socketPath: await context.hostSocket("gateway.sock"),
      })),
    // The PTY server beside that gateway (TRM-4, TRM-7).
    terminal: (context) => createSupervisedTerminal(supervisorTransport(context)),
    // Foreground exec and background commands through the supervisor's process manager.
    execThroughSupervisor: true,
    processes: (context) => createSupervisedProcesses(supervisorTransport(context)),
  });
}
