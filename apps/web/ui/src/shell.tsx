import { decodeTerminalFrame, encodeTerminalFrame, terminalData } from "@rakazo/protocol/terminal";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { api, errorMessage, RakazoApiError, sameOriginPath } from "./api.ts";
import { Confirm } from "./confirm.tsx";
import { useT } from "./i18n.ts";

/** Characters kept while the shell connects; more is dropped. */
const PENDING_INPUT_MAX = 4096;

/**
 * xterm.js's default line height (1.0) makes its DOM renderer's rows exactly a glyph tall, and
 * they clip what sits at the cell's bottom: with the shipped monospace fonts `_` vanished. 1.2
 * leaves room below the baseline (shell-glyphs.browser.integration.test.ts reads the pixels).
 */
const LINE_HEIGHT = 1.2;
/** A cell's size in CSS pixels at 14 px and LINE_HEIGHT, rounded up: the PTY's size from the box. */
const CELL = { width: 9, height: 20 };

/**
 * The Shell tab (TRM-3): an xterm.js terminal on the computer's PTY server, reached through the
 * sealed terminal capability (`computer/terminalUrl`) and the web service's proxy, speaking
 * @rakazo/protocol's frame protocol. Started on first use, kept while the tab is hidden (the
 * component stays mounted), and reconnected to a fresh shell when the connection drops.
 */
export function Shell(props: { computerId: string; botId: string; visible: boolean; inControl: boolean }) {
  const t = useT();
  const host = useRef<HTMLElement>(null);
  const term = useRef<Terminal>(null);
  const [note, setNote] = useState<string | undefined>(t("shell.connecting"));
  const tRef = useRef(t);
  tRef.current = t;

  useEffect(() => {
    if (!props.inControl || !host.current) return;
    const terminal = new Terminal({
      fontSize: 14,
      lineHeight: LINE_HEIGHT,
      cursorBlink: true,
      convertEol: false,
      screenReaderMode: false,
    });
    term.current = terminal;
    terminal.open(host.current);
    let socket: WebSocket | undefined;
    let alive = true;
    let retries = 0;
    const resize = () => {
      const box = host.current?.getBoundingClientRect();
      if (!box || box.width === 0) return;
      const cols = Math.max(20, Math.min(400, Math.floor(box.width / CELL.width)));
      const rows = Math.max(5, Math.min(200, Math.floor(box.height / CELL.height)));
      if (cols !== terminal.cols || rows !== terminal.rows) terminal.resize(cols, rows);
      if (socket?.readyState === WebSocket.OPEN)
        socket.send(encodeTerminalFrame({ type: "resize", cols: terminal.cols, rows: terminal.rows }));
    };
    const observer = new ResizeObserver(resize);
    observer.observe(host.current);
    // Keys typed while the shell connects are kept (bounded) and sent once it opens, so the
    // first command is not cut off.
    let pending = "";
    const input = terminal.onData((data) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(terminalData(data));
      else if (pending.length + data.length <= PENDING_INPUT_MAX) pending += data;
    });

    const connect = async () => {
      const minted = await api.call("computer/terminalUrl", {
        computerId: props.computerId,
        botId: props.botId,
      });
      if (!alive) return;
      const url = new URL(sameOriginPath(minted.websocketUrl), location.href);
      url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
      const ws = new WebSocket(url);
      ws.binaryType = "arraybuffer";
      socket = ws;
      ws.onopen = () => {
        retries = 0;
        setNote(undefined);
        resize();
        if (pending) ws.send(terminalData(pending));
        pending = "";
        terminal.focus();
      };
      ws.onmessage = (event) => {
        const frame = decodeTerminalFrame(new Uint8Array(event.data as ArrayBuffer));
        if (frame.type === "data") terminal.write(frame.data);
        else if (frame.type === "exit") terminal.write(`\r\n[exit ${frame.code ?? frame.signal ?? ""}]\r\n`);
        else if (frame.type === "error") terminal.write(`\r\n[${frame.code}] ${frame.message}\r\n`);
      };
      ws.onclose = () => {
        if (!alive || socket !== ws) return;
        // TRM-3: a dropped connection gets a fresh shell.
        setNote(tRef.current("shell.reconnecting"));
        retries += 1;
        setTimeout(() => void connect().catch(fail), Math.min(5_000, 500 * retries));
      };
    };
    const fail = (error: unknown) => {
      if (!alive) return;
      setNote(
        error instanceof RakazoApiError && error.code === "UNSUPPORTED"
          ? tRef.current("shell.unsupported")
          : errorMessage(error),
      );
    };
    void connect().catch(fail);
    return () => {
      alive = false;
      observer.disconnect();
      input.dispose();
      socket?.close();
      terminal.dispose();
      term.current = null;
    };
  }, [props.computerId, props.botId, props.inControl]);

  useEffect(() => {
    if (props.visible) term.current?.focus();
  }, [props.visible]);

  return (
    <div className="shell" hidden={!props.visible} data-testid="shell">
      {!props.inControl && <p>{t("shell.needsControl")}</p>}
      {props.inControl && note && (
        <p className="note" role="status">
          {note}
        </p>
      )}
      <section className="xterm-host" ref={host} aria-label={t("dock.shell")} />
    </div>
  );
}

/**
 * "Open shell" without control takes control of the bot's screen, after which the bot's own
 * calls are refused (HUMAN_IN_CONTROL) until the person releases it: asked first, in plain words.
 */
export function ShellTakeoverConfirm(props: { bot: string; onConfirm(): void; onCancel(): void }) {
  const t = useT();
  return (
    <Confirm
      title={t("shell.confirmTitle")}
      confirmLabel={t("shell.confirmOk")}
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      <p>{t("shell.confirmText", { bot: props.bot })}</p>
    </Confirm>
  );
}
