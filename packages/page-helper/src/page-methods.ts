/**
 * The supervisor's page methods (BRW-1..5): `page.navigate`, `page.snapshot`, `page.act` for a
 * bot's visible Chromium tab, through CDP on the tab's loopback debugging port (BRW-2). The
 * helper runs in an isolated world (./helper.ts). Each call opens its own short connection, so
 * nothing is cached across calls except what lives in the page's world (the ref table).
 *
 * Actions are real input events (Input.dispatchMouseEvent / insertText / dispatchKeyEvent) at
 * the element's on-screen point, so the page sees what a person's input would produce. After
 * each action the tab must settle: a navigation it started has to finish within the action
 * timeout, or the action counts as delivered-but-unconfirmed (`uncertain`). A batch stops at the
 * first failure and never retries (BRW-5).
 *
 * Downloads during an action are watched by ./downloads.ts.
 */
import {
  PAGE_MAX_ELEMENTS,
  PAGE_MAX_TEXT_CHARS,
  type PageAction,
  type PageActResult,
  type PageNavigation,
  type PageSnapshot,
  SUPERVISOR_METHODS,
} from "@rakazo/protocol";
import { CdpConnection, CdpError, pageTargetUrl } from "./cdp.ts";
import { DownloadWatch } from "./downloads.ts";
import { HELPER_WORLD, installHelper } from "./helper.ts";
import { sleep } from "./sleep.ts";

export { safeDownloadName } from "./downloads.ts";

export interface PageMethodsOptions {
  /** The bot's Chromium debugging port on 127.0.0.1; throws when the bot has no desktop. */
  debuggingPortFor(botId: string): number | Promise<number>;
  /** How long a navigation (or an action's navigation, or a download) may take. */
  readonly navigationTimeoutMs?: number;
  /**
   * Where `page.act` saves downloads: `dir` is the absolute folder, `workspacePath` how results
   * name it (workspace-relative). Without it downloads follow the browser's default and
   * `downloads` stays empty.
   */
  readonly downloads?: { readonly dir: string; readonly workspacePath: string };
}

/**
 * Errors a caller maps to the supervisor's codes: "INVALID_ACTION" is the caller's fault,
 * "DESKTOP_UNAVAILABLE" means the bot's browser cannot be reached, "PAGE_TIMEOUT" that a
 * navigation did not finish loading in time.
 */
export class PageMethodError extends Error {
  readonly code: "INVALID_ACTION" | "DESKTOP_UNAVAILABLE" | "PAGE_TIMEOUT" | "SANDBOX_PROVIDER_ERROR";
  override readonly name = "PageMethodError";
  constructor(code: PageMethodError["code"], message: string) {
    super(message);
    this.code = code;
  }
}

type Params = Record<string, unknown>;
type Failure = NonNullable<PageActResult["error"]>;

const KEYS: Record<string, { code: string; keyCode: number; text?: string }> = {
  Enter: { code: "Enter", keyCode: 13, text: "\r" },
  Tab: { code: "Tab", keyCode: 9 },
  Escape: { code: "Escape", keyCode: 27 },
  Backspace: { code: "Backspace", keyCode: 8 },
  Delete: { code: "Delete", keyCode: 46 },
  ArrowDown: { code: "ArrowDown", keyCode: 40 },
  ArrowUp: { code: "ArrowUp", keyCode: 38 },
  ArrowLeft: { code: "ArrowLeft", keyCode: 37 },
  ArrowRight: { code: "ArrowRight", keyCode: 39 },
  PageDown: { code: "PageDown", keyCode: 34 },
  PageUp: { code: "PageUp", keyCode: 33 },
  Space: { code: "Space", keyCode: 32, text: " " },
};

class ActionFailure extends Error {
  readonly failure: Omit<Failure, "index">;
  constructor(code: Failure["code"], message: string, uncertain: boolean) {
    super(message);
    this.failure = { code, message, uncertain };
  }
}

/** One connection to the bot's tab, tracking the helper world of the current document. */
class TabSession {
  readonly cdp: CdpConnection;
  private readonly timeoutMs: number;
  private contexts = new Map<number, { frameId: string; name: string }>();
  private mainFrameId = "";
  private navigating = false;
  private loadedSinceStart = true;
  /** Main-frame loads that stopped without a load event: cancelled, or turned into a download. */
  abortedLoads = 0;
  private loadWaiters: (() => void)[] = [];

  private constructor(cdp: CdpConnection, timeoutMs: number) {
    this.cdp = cdp;
    this.timeoutMs = timeoutMs;
    cdp.on("Runtime.executionContextCreated", (p) => {
      const c = p.context as { id: number; name: string; auxData?: { frameId?: string } };
      this.contexts.set(c.id, { frameId: c.auxData?.frameId ?? "", name: c.name });
    });
    cdp.on("Runtime.executionContextDestroyed", (p) => this.contexts.delete(p.executionContextId as number));
    cdp.on("Runtime.executionContextsCleared", () => this.contexts.clear());
    cdp.on("Page.frameRequestedNavigation", (p) => {
      if (p.frameId === this.mainFrameId) this.navigating = true;
    });
    cdp.on("Page.frameStartedLoading", (p) => {
      if (p.frameId !== this.mainFrameId) return;
      this.navigating = true;
      this.loadedSinceStart = false;
    });
    const loaded = () => {
      this.navigating = false;
      for (const done of this.loadWaiters.splice(0)) done();
    };
    cdp.on("Page.loadEventFired", () => {
      this.loadedSinceStart = true;
      loaded();
    });
    // A navigation that turned into a download (or was cancelled) stops loading without a load
    // event; the download itself is announced just after.
    cdp.on("Page.frameStoppedLoading", (p) => {
      if (p.frameId !== this.mainFrameId) return;
      if (!this.loadedSinceStart) this.abortedLoads += 1;
      this.loadedSinceStart = true;
      loaded();
    });
  }

  static async open(port: number, timeoutMs: number): Promise<TabSession> {
    const cdp = await CdpConnection.open(await pageTargetUrl(port));
    const tab = new TabSession(cdp, timeoutMs);
    await cdp.send("Page.enable");
    await cdp.send("Runtime.enable");
    const tree = await cdp.send<{ frameTree: { frame: { id: string } } }>("Page.getFrameTree");
    tab.mainFrameId = tree.frameTree.frame.id;
    return tab;
  }

  /** The helper's world in the current document, created (and the helper installed) on demand. */
  private async world(): Promise<number> {
    for (const [id, c] of this.contexts)
      if (c.frameId === this.mainFrameId && c.name === HELPER_WORLD) return id;
    const { executionContextId } = await this.cdp.send<{ executionContextId: number }>(
      "Page.createIsolatedWorld",
      {
        frameId: this.mainFrameId,
        worldName: HELPER_WORLD,
        grantUniveralAccess: false,
      },
    );
    this.contexts.set(executionContextId, { frameId: this.mainFrameId, name: HELPER_WORLD });
    return executionContextId;
  }

  /** Calls `__rakazo.<method>(...args)` in the helper world. */
  async helper<T>(method: string, ...args: unknown[]): Promise<T> {
    const contextId = await this.world();
    const expression = `(${installHelper.toString()})(); globalThis.__rakazo.${method}(...${JSON.stringify(args)})`;
    const answer = await this.cdp.send<{
      result: { value?: unknown };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    }>("Runtime.evaluate", { expression, contextId, returnByValue: true, awaitPromise: true });
    if (answer.exceptionDetails) {
      throw new CdpError(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
    }
    return answer.result.value as T;
  }

  /** Waits for a started navigation to load; false when it did not finish in time. */
  async settle(graceMs = 100): Promise<boolean> {
    await sleep(graceMs);
    if (!this.navigating) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.timeoutMs);
      this.loadWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  async navigate(url: string): Promise<void> {
    const loaded = new Promise<void>((resolve) => this.loadWaiters.push(resolve));
    const result = await this.cdp.send<{ errorText?: string }>("Page.navigate", { url });
    if (result.errorText)
      throw new PageMethodError("INVALID_ACTION", `could not open ${url}: ${result.errorText}`);
    const timedOut = await Promise.race([loaded.then(() => false), sleep(this.timeoutMs).then(() => true)]);
    if (timedOut) throw new PageMethodError("PAGE_TIMEOUT", `${url} did not finish loading in time`);
  }

  async click(x: number, y: number): Promise<void> {
    const base = { x, y, button: "left", clickCount: 1 };
    await this.cdp.send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y });
    await this.cdp.send("Input.dispatchMouseEvent", { type: "mousePressed", ...base });
    await this.cdp.send("Input.dispatchMouseEvent", { type: "mouseReleased", ...base });
  }

  async press(key: string): Promise<void> {
    const known = KEYS[key];
    const single = key.length === 1 ? key : undefined;
    if (!known && !single)
      throw new ActionFailure("NOT_ACTIONABLE", `unknown key ${JSON.stringify(key)}`, false);
    const text = known?.text ?? single;
    const common = {
      key: key === "Space" ? " " : key,
      code: known?.code ?? "",
      windowsVirtualKeyCode: known?.keyCode ?? single?.toUpperCase().charCodeAt(0) ?? 0,
    };
    await this.cdp.send("Input.dispatchKeyEvent", {
      type: text ? "keyDown" : "rawKeyDown",
      ...common,
      ...(text ? { text } : {}),
    });
    await this.cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...common });
  }

  async targetInfo(): Promise<{ url: string; title: string }> {
    const info = await this.cdp
      .send<{ targetInfo: { url: string; title: string } }>("Target.getTargetInfo", {}, 2_000)
      .catch(() => ({ targetInfo: { url: "", title: "" } }));
    return { url: info.targetInfo.url, title: info.targetInfo.title };
  }

  close(): void {
    this.cdp.close();
  }
}

function str(params: Params, key: string): string {
  const value = params[key];
  if (typeof value !== "string" || value === "")
    throw new PageMethodError("INVALID_ACTION", `${key} must be a string`);
  return value;
}

/** Unwraps a helper answer, turning its `{error}` into an action failure (nothing was sent). */
function checked<T>(answer: T | { error: { code: Failure["code"]; message: string } }): T {
  if (answer && typeof answer === "object" && "error" in answer) {
    throw new ActionFailure(answer.error.code, answer.error.message, false);
  }
  return answer as T;
}

async function runAction(tab: TabSession, action: PageAction): Promise<void> {
  // Everything before `delivered` happens inside the helper: a failure there changed nothing.
  let delivered = false;
  try {
    switch (action.type) {
      case "wait":
        await sleep(Math.min(Math.max(action.ms, 0), 10_000));
        return;
      case "scroll":
        checked(await tab.helper("scroll", action.dy));
        return;
      case "select":
        checked(await tab.helper("select", action.ref, action.value));
        delivered = true;
        break;
      case "fill":
        checked(await tab.helper("focusForFill", action.ref));
        delivered = true;
        if (action.text === "") checked(await tab.helper("clear", action.ref));
        else await tab.cdp.send("Input.insertText", { text: action.text });
        break;
      case "press":
        if (action.ref) checked(await tab.helper("focus", action.ref));
        delivered = true;
        await tab.press(action.key);
        break;
      case "check": {
        const state = checked(await tab.helper<{ checked: boolean }>("checked", action.ref));
        if (state.checked === action.checked) return;
        const point = checked(await tab.helper<{ x: number; y: number }>("point", action.ref));
        delivered = true;
        await tab.click(point.x, point.y);
        break;
      }
      case "click": {
        const point = checked(await tab.helper<{ x: number; y: number }>("point", action.ref));
        delivered = true;
        await tab.click(point.x, point.y);
        break;
      }
      default:
        throw new ActionFailure(
          "NOT_ACTIONABLE",
          `unknown action ${JSON.stringify((action as { type: unknown }).type)}`,
          false,
        );
    }
  } catch (error) {
    if (error instanceof ActionFailure) throw error;
    throw new ActionFailure("FAILED", (error as Error).message, delivered);
  }
  if (!(await tab.settle())) {
    throw new ActionFailure(
      "TIMEOUT",
      "the page started loading after this action and did not finish in time",
      true,
    );
  }
}

export function createPageMethods(options: PageMethodsOptions) {
  const timeoutMs = options.navigationTimeoutMs ?? 15_000;

  async function withTab<T>(params: Params, use: (tab: TabSession, port: number) => Promise<T>): Promise<T> {
    const port = await options.debuggingPortFor(str(params, "botId"));
    const tab = await TabSession.open(port, timeoutMs).catch((error: unknown) => {
      throw unreachable(error);
    });
    try {
      return await use(tab, port);
    } finally {
      tab.close();
    }
  }

  return {
    "page.navigate": (params: Params): Promise<PageNavigation> =>
      withTab(params, async (tab) => {
        const url = str(params, "url");
        if (!/^https?:\/\//i.test(url))
          throw new PageMethodError("INVALID_ACTION", "only http(s) URLs can be opened");
        await tab.navigate(url);
        return tab.helper<PageNavigation>("title");
      }),

    "page.snapshot": (params: Params): Promise<PageSnapshot> =>
      withTab(params, (tab) => tab.helper<PageSnapshot>("snapshot", PAGE_MAX_ELEMENTS, PAGE_MAX_TEXT_CHARS)),

    "page.act": (params: Params): Promise<PageActResult> =>
      withTab(params, async (tab, port) => {
        const parsed = SUPERVISOR_METHODS["page.act"].params.shape.actions.safeParse(params.actions);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new PageMethodError(
            "INVALID_ACTION",
            `actions must be a list of 1 to 50 page actions (${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"})`,
          );
        }
        const actions = parsed.data;
        const downloads = options.downloads
          ? await DownloadWatch.open(port, options.downloads).catch((error: unknown) => {
              throw unreachable(error);
            })
          : undefined;
        try {
          return await actOn(tab, actions, downloads);
        } finally {
          await downloads?.close();
        }
      }),
  };

  async function actOn(
    tab: TabSession,
    actions: readonly PageAction[],
    watch: DownloadWatch | undefined,
  ): Promise<PageActResult> {
    let completed = 0;
    let error: Failure | undefined;
    for (const action of actions) {
      try {
        await runAction(tab, action);
        completed += 1;
      } catch (failure) {
        const known =
          failure instanceof ActionFailure
            ? failure.failure
            : { code: "FAILED" as const, message: String(failure), uncertain: true };
        error = { ...known, index: completed };
        break;
      }
    }
    // After an unsettled action the document may still be changing: report what the tab's
    // target says rather than waiting on a world that may never come.
    const where = error?.uncertain
      ? await tab.targetInfo()
      : await tab.helper<{ url: string; title: string }>("title").catch(() => tab.targetInfo());
    // A load that stopped without loading may be a download Chromium announces a moment later.
    const downloads = watch ? await watch.finish(timeoutMs, tab.abortedLoads > 0 ? 2_000 : 0) : [];
    return { completed, total: actions.length, ...where, downloads, ...(error ? { error } : {}) };
  }
}

function unreachable(error: unknown): PageMethodError {
  return new PageMethodError(
    "DESKTOP_UNAVAILABLE",
    `the bot's browser is not reachable: ${(error as Error).message}`,
  );
}
