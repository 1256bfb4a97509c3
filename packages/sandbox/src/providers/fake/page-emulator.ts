/**
 * An in-process page browser (BRW-7) for fake computers and tests: a tiny DOM model of served
 * HTML, no JavaScript. It fetches pages (tests serve them on loopback), lists links, buttons and
 * form fields as refs, follows links, submits forms (GET and POST) and saves attachments as
 * downloads. It keeps the contract's promises exactly as the real browser must: bounded
 * snapshots, masked passwords, refs bound to one document, prefix-and-uncertainty reports.
 *
 * It is deliberately not the live logged-in browser: it has no cookies beyond one jar per bot,
 * runs no scripts, and renders nothing.
 */
import { randomBytes } from "node:crypto";
import {
  PAGE_MAX_ELEMENTS,
  PAGE_MAX_TEXT_CHARS,
  type PageAction,
  type PageActResult,
  type PageBrowser,
  type PageElement,
  type PageNavigation,
  type PageSnapshot,
} from "../../provider.ts";
import {
  all,
  collapse,
  type Doc,
  describe,
  fieldValue,
  find,
  formOf,
  isInteractive,
  isTextField,
  type Node,
  parseHtml,
  safeName,
  textOf,
} from "./page-dom.ts";

export interface PageEmulatorOptions {
  /** Saves a downloaded file; returns its workspace-relative path. Kept in memory when absent. */
  readonly saveDownload?: (botId: string, name: string, data: Uint8Array) => Promise<string>;
  /** How long one navigation or form submission may take before it counts as uncertain. */
  readonly requestTimeoutMs?: number;
  readonly fetch?: typeof fetch;
}

class ActionFailure extends Error {
  readonly code: NonNullable<PageActResult["error"]>["code"];
  readonly uncertain: boolean;
  constructor(code: ActionFailure["code"], message: string, uncertain = false) {
    super(message);
    this.code = code;
    this.uncertain = uncertain;
  }
}

export function createPageEmulator(options: PageEmulatorOptions = {}): PageBrowser {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const docs = new Map<string, Doc>();
  const memoryDownloads = new Map<string, Uint8Array>();

  async function load(
    botId: string,
    url: string,
    init: RequestInit = {},
    downloads: { path: string; size: number }[] = [],
  ): Promise<Doc> {
    let response: Response;
    try {
      response = await doFetch(url, { ...init, redirect: "follow", signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const timedOut = (error as Error).name === "TimeoutError";
      // A request that was sent may have reached the server: its effect is unknown.
      throw new ActionFailure(
        timedOut ? "TIMEOUT" : "FAILED",
        `loading ${url} failed: ${(error as Error).message}`,
        true,
      );
    }
    const body = new Uint8Array(await response.arrayBuffer());
    const disposition = response.headers.get("content-disposition") ?? "";
    if (/attachment/i.test(disposition)) {
      const name = safeName(/filename="?([^";]+)"?/i.exec(disposition)?.[1] ?? "download");
      let path = `downloads/${name}`;
      if (options.saveDownload) path = await options.saveDownload(botId, name, body);
      else memoryDownloads.set(`${botId}/${name}`, body);
      downloads.push({ path, size: body.length });
      const current = docs.get(botId);
      if (current) return current;
      throw new ActionFailure("FAILED", `${url} is a download, not a page`);
    }
    const root = parseHtml(new TextDecoder().decode(body));
    const doc: Doc = {
      id: randomBytes(3).toString("hex"),
      url: response.url || url,
      title: collapse(textOf(find(root, (n) => n.tag === "title") ?? root, true)),
      status: response.status,
      root,
      refs: new Map(),
      nextRef: 1,
    };
    docs.set(botId, doc);
    return doc;
  }

  function current(botId: string): Doc {
    const doc = docs.get(botId);
    if (!doc) throw new ActionFailure("NOT_ACTIONABLE", "no page is open; navigate first");
    return doc;
  }

  function resolveRef(doc: Doc, ref: string): Node {
    const node = doc.refs.get(ref);
    if (node) return node;
    // Refs carry their document's id, so an old ref can never name an element of a new page.
    if (/^[0-9a-f]{6}e\d+$/.test(ref) && !ref.startsWith(doc.id)) {
      throw new ActionFailure("STALE_REF", `ref ${ref} is from an earlier page; take a new snapshot`);
    }
    throw new ActionFailure("UNKNOWN_REF", `ref ${ref} was not in a snapshot of this page`);
  }

  async function submit(
    botId: string,
    doc: Doc,
    form: Node | undefined,
    submitter?: Node,
    downloads?: { path: string; size: number }[],
  ) {
    if (!form)
      throw new ActionFailure(
        "NOT_ACTIONABLE",
        "this button belongs to no form and the emulator runs no scripts",
      );
    const params = new URLSearchParams();
    for (const field of all(form, (n) => ["input", "select", "textarea"].includes(n.tag))) {
      const name = field.attrs.name;
      const type = field.attrs.type?.toLowerCase();
      if (!name || field.attrs.disabled !== undefined || type === "submit" || type === "button") continue;
      if ((type === "checkbox" || type === "radio") && !field.checked) continue;
      params.append(name, fieldValue(field));
    }
    if (submitter?.attrs.name) params.append(submitter.attrs.name, submitter.attrs.value ?? "");
    const action = new URL(form.attrs.action ?? "", doc.url);
    if ((form.attrs.method ?? "get").toLowerCase() === "post") {
      await load(botId, action.href, { method: "POST", body: params }, downloads);
    } else {
      action.search = params.toString();
      await load(botId, action.href, {}, downloads);
    }
  }

  async function runAction(botId: string, action: PageAction, downloads: { path: string; size: number }[]) {
    if (action.type === "wait") {
      await new Promise((done) => setTimeout(done, Math.min(action.ms, 10_000)));
      return;
    }
    const doc = current(botId);
    if (action.type === "scroll") return;
    if (action.type === "press") {
      const target = action.ref ? resolveRef(doc, action.ref) : undefined;
      if (action.key === "Enter" && target && isTextField(target))
        await submit(botId, doc, formOf(target), undefined, downloads);
      return;
    }
    const node = resolveRef(doc, action.ref);
    if (node.attrs.disabled !== undefined)
      throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is disabled`);
    const type = node.attrs.type?.toLowerCase() ?? "";
    switch (action.type) {
      case "fill":
        if (!isTextField(node))
          throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is not a text field`);
        node.value = action.text;
        return;
      case "select": {
        if (node.tag !== "select") throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is not a select`);
        const option = all(node, (n) => n.tag === "option").find(
          (o) =>
            (o.attrs.value ?? collapse(textOf(o, true))) === action.value ||
            collapse(textOf(o, true)) === action.value,
        );
        if (!option) throw new ActionFailure("NOT_ACTIONABLE", `no option ${JSON.stringify(action.value)}`);
        node.value = option.attrs.value ?? collapse(textOf(option, true));
        return;
      }
      case "check":
        if (type !== "checkbox" && type !== "radio")
          throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is not a checkbox`);
        node.checked = action.checked;
        return;
      case "click": {
        if (type === "checkbox" || type === "radio") {
          node.checked = type === "radio" ? true : !node.checked;
          return;
        }
        if (node.tag === "a" && node.attrs.href !== undefined) {
          await load(botId, new URL(node.attrs.href, doc.url).href, {}, downloads);
          return;
        }
        const isSubmit =
          (node.tag === "button" && (type === "" || type === "submit")) ||
          (node.tag === "input" && (type === "submit" || type === "image"));
        if (isSubmit) return submit(botId, doc, formOf(node), node, downloads);
        if (node.tag === "iframe") throw new ActionFailure("NOT_ACTIONABLE", "frames need desktop tools");
        return; // a scripted control: without scripts, nothing visible happens
      }
    }
  }

  return {
    async navigate(botId, url): Promise<PageNavigation> {
      const target = new URL(url);
      if (target.protocol !== "http:" && target.protocol !== "https:") {
        throw new Error(`only http(s) pages can be opened, not ${target.protocol}`);
      }
      const doc = await load(botId, target.href).catch((error: unknown) => {
        throw error instanceof ActionFailure ? new Error(error.message) : error;
      });
      return { url: doc.url, title: doc.title, status: doc.status };
    },

    async snapshot(botId): Promise<PageSnapshot> {
      const doc = docs.get(botId);
      if (!doc)
        return {
          url: "about:blank",
          title: "",
          text: "",
          textTruncated: false,
          elements: [],
          omittedElements: 0,
          frames: 0,
        };
      const body = find(doc.root, (n) => n.tag === "body") ?? doc.root;
      const text = collapse(textOf(body, false));
      const interactive = all(body, isInteractive);
      const elements: PageElement[] = [];
      for (const node of interactive.slice(0, PAGE_MAX_ELEMENTS)) {
        let ref = [...doc.refs].find(([, n]) => n === node)?.[0];
        if (!ref) {
          ref = `${doc.id}e${doc.nextRef++}`;
          doc.refs.set(ref, node);
        }
        elements.push(describe(doc, node, ref));
      }
      return {
        url: doc.url,
        title: doc.title,
        text: text.slice(0, PAGE_MAX_TEXT_CHARS),
        textTruncated: text.length > PAGE_MAX_TEXT_CHARS,
        elements,
        omittedElements: Math.max(0, interactive.length - PAGE_MAX_ELEMENTS),
        frames: all(body, (n) => n.tag === "iframe" || n.tag === "frame").length,
      };
    },

    async act(botId, actions): Promise<PageActResult> {
      const downloads: { path: string; size: number }[] = [];
      let completed = 0;
      let error: PageActResult["error"];
      for (const action of actions) {
        try {
          await runAction(botId, action, downloads);
          completed += 1;
        } catch (failure) {
          const known = failure instanceof ActionFailure;
          error = {
            code: known ? failure.code : "FAILED",
            message: (failure as Error).message,
            index: completed,
            uncertain: known ? failure.uncertain : true,
          };
          break; // never continue past a failure, never retry (BRW-5)
        }
      }
      const doc = docs.get(botId);
      return {
        completed,
        total: actions.length,
        url: doc?.url ?? "about:blank",
        title: doc?.title ?? "",
        downloads,
        ...(error ? { error } : {}),
      };
    },
  };
}
