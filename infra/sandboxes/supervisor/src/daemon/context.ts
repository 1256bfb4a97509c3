/**
 * The daemon's composition root: one `SupervisorContext` per daemon, built once by `serve` and
 * handed to every RPC handler (rpc-server.ts). Capabilities do not reach for each other; what
 * crosses between them is wired here, in one place:
 * - the gateway reads slots from the desktops (built with `slotAt` from them), and
 * - the desktops tell the gateway before a slot generation is torn down, so its viewers and the
 *   bot's terminal close first (SCR-3, TRM-6);
 * - page methods drive each bot's own Chromium through the desktops' DevTools ports, and the
 *   background processes run in the workspace; both are made once, here.
 */
import path from "node:path";
import { createPageMethods } from "@rakazo/page-helper";
import type { DesktopSlots } from "../desktops/desktop-slots.ts";
import type { ComputerGateway } from "../gateway/computer-gateway.ts";
import { type Log, silentLog } from "../log.ts";
import { ProcessManager } from "../processes/processes.ts";

type PageMethods = ReturnType<typeof createPageMethods>;

export interface SupervisorContext {
  /** The computer's workspace folder (the desktops' profiles, downloads, processes' cwd). */
  readonly workspace: string;
  readonly log: Log;
  readonly desktops: DesktopSlots;
  /** `page.*`: each bot's own Chromium, downloads into `<workspace>/downloads`. */
  readonly pages: PageMethods;
  /** `process.*`: killed all at once when the daemon stops. */
  readonly processes: ProcessManager;
  /** Absent when the daemon runs no gateway (`--gateway-listen off`): `screens.*` then refuse. */
  readonly gateway: ComputerGateway | undefined;
}

export function createContext(parts: {
  readonly desktops: DesktopSlots;
  readonly gateway?: ComputerGateway;
  readonly log?: Log;
}): SupervisorContext {
  const { desktops, gateway } = parts;
  if (gateway) desktops.onSlotClosing((index, generation) => gateway.closeSlot(index, generation));
  return {
    workspace: desktops.workspace,
    log: parts.log ?? silentLog,
    desktops,
    pages: createPageMethods({
      debuggingPortFor: (botId) => desktops.debugPortOf(botId),
      downloads: { dir: path.join(desktops.workspace, "downloads"), workspacePath: "downloads" },
    }),
    processes: new ProcessManager({ workspace: desktops.workspace }),
    gateway,
  };
}
