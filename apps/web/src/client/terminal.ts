// The terminal page's script (TRM-4; browser-only, bundled by esbuild at startup): xterm.js on a
// websocket to `pty` beside the page, speaking @rakazo/protocol/terminal. The page's status is
// `data-status` on <html> (connecting, connected, exited, failed, closed) for the dock and tests.
import {
  decodeTerminalFrame,
  encodeTerminalFrame,
  TerminalFrameError,
  terminalData,
} from "@rakazo/protocol/terminal";
import { Terminal } from "@xterm/xterm";

const root = document.documentElement;
const status = (value: string): void => {
  root.dataset.status = value;
};
const url = new URL("pty", location.href);
url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
const term = new Terminal({ cols: 100, rows: 30, convertEol: false, scrollback: 5000 });
term.open(document.getElementById("terminal") as HTMLElement);
status("connecting");
const socket = new WebSocket(url.href);
socket.binaryType = "arraybuffer";
const send = (bytes: Uint8Array): void => {
  if (socket.readyState === WebSocket.OPEN) socket.send(bytes);
};
socket.addEventListener("open", () => {
  status("connected");
  send(encodeTerminalFrame({ type: "resize", cols: term.cols, rows: term.rows }));
  term.focus();
});
socket.addEventListener("message", (event: MessageEvent<ArrayBuffer>) => {
  try {
    const frame = decodeTerminalFrame(new Uint8Array(event.data));
    if (frame.type === "data") term.write(frame.data);
    else if (frame.type === "exit") status("exited");
    else if (frame.type === "error") {
      term.write(`\r\n[${frame.code}] ${frame.message}\r\n`);
      status("failed");
    }
  } catch (error) {
    if (error instanceof TerminalFrameError) socket.close(1008);
  }
});
socket.addEventListener("close", (event) => {
  root.dataset.closeCode = String(event.code);
  if (root.dataset.status === "connected" || root.dataset.status === "connecting") status("closed");
});
term.onData((data) => send(terminalData(data)));
term.onResize(({ cols, rows }) => send(encodeTerminalFrame({ type: "resize", cols, rows })));
(window as unknown as { __rakazoTerminal?: Terminal }).__rakazoTerminal = term;
