/**
 * The browser terminal over the in-computer supervisor (TRM-4, TRM-7): `terminal.start` starts
 * (or joins) the PTY server beside the screen gateway for a bot, `terminal.stop` ends its shells.
 * The same for every provider whose computer runs the supervisor; shells are reached through the
 * screen gateway's `/v1/pty` with a `terminal` ticket.
 */
import type { Sandbox } from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

export type SandboxTerminal = Required<Pick<Sandbox, "connectTerminal" | "stopTerminal">>;

export function createSupervisedTerminal(transport: SupervisorTransport): SandboxTerminal {
  return {
    async connectTerminal(request) {
      const { sessions } = await transport.call("terminal.start", { botId: request.botId, cwd: request.cwd });
      return { sessions };
    },
    async stopTerminal(request) {
      const { closed } = await transport.call(
        "terminal.stop",
        request.botId === undefined ? {} : { botId: request.botId },
      );
      return { closed };
    },
  };
}
