/**
 * A minimal Chrome DevTools Protocol client over Node 24's built-in WebSocket: commands with
 * ids, and events. It talks only to the loopback debugging port of the bot's own Chromium
 * (BRW-2); nothing here opens a port.
 */

export class CdpError extends Error {
  override readonly name = "CdpError";
}

type Listener = (params: Record<string, unknown>) => void;

export class CdpConnection {
  private readonly socket: WebSocket;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private closedError: Error | undefined;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener("message", (event) => this.onMessage(String(event.data)));
    socket.addEventListener("close", () => this.fail(new CdpError("the browser connection closed")));
    socket.addEventListener("error", () => this.fail(new CdpError("the browser connection failed")));
  }

  static async open(url: string, timeoutMs = 5_000): Promise<CdpConnection> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new CdpError(`no answer from ${url}`)), timeoutMs);
      socket.addEventListener("open", () => {
        clearTimeout(timer);
        resolve();
      });
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        reject(new CdpError(`cannot connect to the browser at ${url}`));
      });
    });
    return new CdpConnection(socket);
  }

  send<T = Record<string, unknown>>(
    method: string,
    params: Record<string, unknown> = {},
    timeoutMs = 30_000,
  ): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new CdpError(`${method} timed out`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  on(event: string, listener: Listener): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  close(): void {
    this.fail(new CdpError("closed"));
    this.socket.close();
  }

  private onMessage(raw: string): void {
    const message = JSON.parse(raw) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
      method?: string;
      params?: Record<string, unknown>;
    };
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.reject(new CdpError(message.error.message));
      else waiter?.resolve(message.result ?? {});
      return;
    }
    if (message.method)
      for (const listener of this.listeners.get(message.method) ?? []) listener(message.params ?? {});
  }

  private fail(error: Error): void {
    if (this.closedError) return;
    this.closedError = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

/**
 * The WebSocket URL of the bot's visible tab. With one tab that is it; with several (a restored
 * session brings back every tab, CMP-6) the one whose document is visible, asked in an isolated
 * world so a page cannot lie about it; the first page target when none answers.
 */
export async function pageTargetUrl(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/json/list`);
  const targets = (await response.json()) as { type: string; webSocketDebuggerUrl?: string }[];
  const pages = targets.flatMap((t) =>
    t.type === "page" && t.webSocketDebuggerUrl ? [t.webSocketDebuggerUrl] : [],
  );
  const [first] = pages;
  if (!first) throw new CdpError("the browser has no open tab");
  if (pages.length === 1) return first;
  for (const url of pages) if (await tabVisible(url)) return url;
  return first;
}

async function tabVisible(url: string): Promise<boolean> {
  let cdp: CdpConnection | undefined;
  try {
    cdp = await CdpConnection.open(url, 2_000);
    const { frameTree } = await cdp.send<{ frameTree: { frame: { id: string } } }>(
      "Page.getFrameTree",
      {},
      2_000,
    );
    const { executionContextId } = await cdp.send<{ executionContextId: number }>(
      "Page.createIsolatedWorld",
      { frameId: frameTree.frame.id, worldName: "rakazo-visibility" },
      2_000,
    );
    const { result } = await cdp.send<{ result: { value?: unknown } }>(
      "Runtime.evaluate",
      { expression: "document.visibilityState", contextId: executionContextId, returnByValue: true },
      2_000,
    );
    return result.value === "visible";
  } catch {
    return false;
  } finally {
    cdp?.close();
  }
}

/** The WebSocket URL of the browser target (browser-wide domains such as `Browser.*`). */
export async function browserTargetUrl(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/json/version`);
  const { webSocketDebuggerUrl } = (await response.json()) as { webSocketDebuggerUrl?: string };
  if (!webSocketDebuggerUrl) throw new CdpError("the browser has no debugger endpoint");
  return webSocketDebuggerUrl;
}
