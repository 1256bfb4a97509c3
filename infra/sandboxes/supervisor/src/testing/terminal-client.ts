/**
 * A test and bench client for the browser terminal's websocket (TRM-4): frames are
 * `@rakazo/protocol/terminal`; output is collected as text, exit and error frames are kept.
 */
import {
  decodeTerminalFrame,
  encodeTerminalFrame,
  type TerminalFrame,
  terminalData,
} from "@rakazo/protocol/terminal";
import WebSocket from "ws";

export interface TerminalClient {
  readonly ws: WebSocket;
  /** Everything the shell printed so far. */
  output(): string;
  frames(): readonly TerminalFrame[];
  type(text: string): void;
  resize(cols: number, rows: number): void;
  /** Resolves once the output matches (checks from `since`), rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number, since?: number): Promise<RegExpExecArray>;
  closed: Promise<number>;
}

export function openTerminal(url: string, headers: Record<string, string> = {}): Promise<TerminalClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    ws.binaryType = "nodebuffer";
    let text = "";
    const frames: TerminalFrame[] = [];
    const waiters = new Set<() => void>();
    ws.on("message", (data: Buffer) => {
      const frame = decodeTerminalFrame(new Uint8Array(data));
      frames.push(frame);
      if (frame.type === "data") text += Buffer.from(frame.data).toString("utf8");
      for (const wake of [...waiters]) wake();
    });
    const closed = new Promise<number>((done) => ws.once("close", (code) => done(code)));
    const client: TerminalClient = {
      ws,
      output: () => text,
      frames: () => frames,
      type: (input) => ws.send(terminalData(input)),
      resize: (cols, rows) => ws.send(encodeTerminalFrame({ type: "resize", cols, rows })),
      waitFor: (pattern, ms = 10_000, since = 0) =>
        new Promise((done, fail) => {
          const check = (): boolean => {
            const match = pattern.exec(text.slice(since));
            if (!match) return false;
            waiters.delete(wake);
            clearTimeout(timer);
            done(match);
            return true;
          };
          const wake = (): void => void check();
          const timer = setTimeout(() => {
            waiters.delete(wake);
            fail(new Error(`terminal output never matched ${pattern}: ${JSON.stringify(text.slice(-500))}`));
          }, ms);
          waiters.add(wake);
          check();
        }),
      closed,
    };
    ws.once("open", () => resolve(client));
    ws.once("unexpected-response", (_req, res) => {
      res.resume();
      reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode }));
    });
    ws.once("error", reject);
  });
}
