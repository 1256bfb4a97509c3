/**
 * The contract suite's client for a computer's terminal route (TRM-4): a websocket to
 * `/v1/pty` on the sandbox's gateway target with a `terminal` ticket, as the web proxy opens it
 * (a Unix socket for Docker, the provider's hosted URL with its auth headers for remote
 * computers). Frames are `@rakazo/protocol/terminal`; output is collected as text.
 */
import { gatewayUrl, TICKET_HEADER } from "@rakazo/protocol";
import { decodeTerminalFrame, TERMINAL_GATEWAY_PATH, terminalData } from "@rakazo/protocol/terminal";
import WebSocket from "ws";
import type { ScreenGatewayTarget } from "../provider.ts";

export interface ContractTerminal {
  /** Everything the shell printed so far. */
  output(): string;
  type(text: string): void;
  /** Resolves once the output matches, rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** The close code, once the connection ended. */
  readonly closed: Promise<number>;
  close(): void;
}

/** Opens a shell; rejects with `status` set when the gateway refuses the upgrade. */
export function openContractTerminal(target: ScreenGatewayTarget, ticket: string): Promise<ContractTerminal> {
  const url =
    target.transport === "unix"
      ? `ws+unix://${target.socketPath}:${TERMINAL_GATEWAY_PATH}`
      : // The path joins the base's; its query (Boat's port token) is kept.
        gatewayUrl(target.url, TERMINAL_GATEWAY_PATH).href.replace(/^http/, "ws");
  const headers = { ...(target.transport === "http" ? target.headers : {}), [TICKET_HEADER]: ticket };
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 30_000 });
    ws.binaryType = "nodebuffer";
    let text = "";
    const waiters = new Set<() => void>();
    ws.on("message", (data: Buffer) => {
      const frame = decodeTerminalFrame(new Uint8Array(data));
      if (frame.type === "data") text += Buffer.from(frame.data).toString("utf8");
      for (const wake of [...waiters]) wake();
    });
    const closed = new Promise<number>((done) => ws.once("close", (code) => done(code)));
    ws.once("open", () =>
      resolve({
        output: () => text,
        type: (input) => ws.send(terminalData(input)),
        waitFor: (pattern, ms = 20_000) =>
          new Promise((done, fail) => {
            const check = (): void => {
              const match = pattern.exec(text);
              if (!match) return;
              waiters.delete(check);
              clearTimeout(timer);
              done(match);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(
                new Error(`terminal output never matched ${pattern}: ${JSON.stringify(text.slice(-500))}`),
              );
            }, ms);
            waiters.add(check);
            check();
          }),
        closed,
        close: () => ws.terminate(),
      }),
    );
    ws.once("unexpected-response", (_request, response) => {
      response.resume();
      reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode }));
    });
    ws.once("error", reject);
  });
}
