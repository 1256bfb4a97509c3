/**
 * An in-process page browser (BRW-7) for fake computers and tests: served HTML parsed into a
 * real DOM (linkedom, ./page-dom.ts), no JavaScript. It fetches pages (tests serve them on loopback), lists links, buttons and
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
  collapse,
  type Doc,
  describe,
  type El,
  fieldValue,
  interactiveElements,
  isChecked,
  isTextField,
  options as optionsOf,
  optionValue,
  parsePage,
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
    const document = parsePage(new TextDecoder().decode(body));
    const doc: Doc = {
      id: randomBytes(3).toString("hex"),
      url: response.url || url,
      title: collapse(textOf(document.querySelector("title"), true)),
      status: response.status,
      document,
      refs: new Map(),
      refOf: new WeakMap(),
      values: new WeakMap(),
      checks: new WeakMap(),
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

  function resolveRef(doc: Doc, ref: string): El {
    const node = doc.refs.get(ref);
    if (node?.isConnected) return node;
    if (node)
      throw new ActionFailure("STALE_REF", `the element of ref ${ref} was removed; take a new snapshot`);
    // Refs carry their document's id, so an old ref can never name an element of a new page.
    if (/^[0-9a-f]{6}e\d+$/.test(ref) && !ref.startsWith(doc.id)) {
      throw new ActionFailure("STALE_REF", `ref ${ref} is from an earlier page; take a new snapshot`);
    }
    throw new ActionFailure("UNKNOWN_REF", `ref ${ref} was not in a snapshot of this page`);
  }

  async function submit(
    botId: string,
    doc: Doc,
    form: El | null,
    submitter?: El,
    downloads?: { path: string; size: number }[],
  ) {
    if (!form)
      throw new ActionFailure(
        "NOT_ACTIONABLE",
        "this button belongs to no form and the emulator runs no scripts",
      );
    const params = new URLSearchParams();
    for (const field of Array.from(form.querySelectorAll("input,select,textarea"))) {
      const name = field.getAttribute("name");
      const type = field.getAttribute("type")?.toLowerCase();
      if (!name || field.hasAttribute("disabled") || type === "submit" || type === "button") continue;
      if ((type === "checkbox" || type === "radio") && !isChecked(doc, field)) continue;
      params.append(name, fieldValue(doc, field));
    }
    const submitterName = submitter?.getAttribute("name");
    if (submitterName) params.append(submitterName, submitter?.getAttribute("value") ?? "");
    const action = new URL(form.getAttribute("action") ?? "", doc.url);
    if ((form.getAttribute("method") ?? "get").toLowerCase() === "post") {
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
        await submit(botId, doc, target.closest("form"), undefined, downloads);
      return;
    }
    const node = resolveRef(doc, action.ref);
    if (node.hasAttribute("disabled")) throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is disabled`);
    const type = node.getAttribute("type")?.toLowerCase() ?? "";
    const tag = node.tagName.toLowerCase();
    switch (action.type) {
      case "fill":
        if (!isTextField(node))
          throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is not a text field`);
        doc.values.set(node, action.text);
        return;
      case "select": {
        if (tag !== "select") throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is not a select`);
        const option = optionsOf(node).find(
          (o) => optionValue(o) === action.value || collapse(textOf(o, true)) === action.value,
        );
        if (!option) throw new ActionFailure("NOT_ACTIONABLE", `no option ${JSON.stringify(action.value)}`);
        doc.values.set(node, optionValue(option));
        return;
      }
      case "check":
        if (type !== "checkbox" && type !== "radio")
          throw new ActionFailure("NOT_ACTIONABLE", `${action.ref} is not a checkbox`);
        doc.checks.set(node, action.checked);
        return;
      case "click": {
        if (type === "checkbox" || type === "radio") {
          doc.checks.set(node, type === "radio" ? true : !isChecked(doc, node));
          return;
        }
        if (tag === "iframe" || tag === "frame")
          throw new ActionFailure("NOT_ACTIONABLE", "frames need desktop tools");
        if (tag === "a" && node.hasAttribute("href")) {
          await load(botId, new URL(node.getAttribute("href") ?? "", doc.url).href, {}, downloads);
          return;
        }
        const isSubmit =
          (tag === "button" && (type === "" || type === "submit")) ||
          (tag === "input" && (type === "submit" || type === "image"));
        if (isSubmit) return submit(botId, doc, node.closest("form"), node, downloads);
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
      const body = doc.document.querySelector("body") ?? doc.document;
      const text = collapse(textOf(body, false));
      const interactive = interactiveElements(doc.document);
      const elements: PageElement[] = [];
      for (const node of interactive.slice(0, PAGE_MAX_ELEMENTS)) {
        let ref = doc.refOf.get(node);
        if (!ref) {
          ref = `${doc.id}e${doc.nextRef++}`;
          doc.refs.set(ref, node);
          doc.refOf.set(node, ref);
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
        frames: doc.document.querySelectorAll("iframe,frame").length,
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
