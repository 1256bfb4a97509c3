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

export interface PageEmulatorOptions {
  /** Saves a downloaded file; returns its workspace-relative path. Kept in memory when absent. */
  readonly saveDownload?: (botId: string, name: string, data: Uint8Array) => Promise<string>;
  /** How long one navigation or form submission may take before it counts as uncertain. */
  readonly requestTimeoutMs?: number;
  readonly fetch?: typeof fetch;
}

interface Node {
  tag: string;
  attrs: Record<string, string>;
  children: (Node | string)[];
  parent?: Node;
  /** Live form state; starts from the markup. */
  value?: string;
  checked?: boolean;
}

interface Doc {
  id: string;
  url: string;
  title: string;
  status: number;
  root: Node;
  refs: Map<string, Node>;
  nextRef: number;
}

const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "source",
  "wbr",
]);
const SKIP_TEXT = new Set([
  "script",
  "style",
  "template",
  "noscript",
  "head",
  "select",
  "textarea",
  "option",
]);
const BLOCK = /^(p|div|li|tr|h[1-6]|section|article|header|footer|form|table|ul|ol|br|label|main|nav)$/;
export const MASKED_VALUE = "••••";

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

// ---------------------------------------------------------------- the DOM model

function describe(doc: Doc, node: Node, ref: string): PageElement {
  const type = node.attrs.type?.toLowerCase() ?? "";
  const out: { -readonly [K in keyof PageElement]: PageElement[K] } = {
    ref,
    role: roleOf(node),
    name: nameOf(doc, node),
  };
  if (isTextField(node) || node.tag === "select")
    out.value = type === "password" ? (fieldValue(node) ? MASKED_VALUE : "") : fieldValue(node);
  if (type === "checkbox" || type === "radio") out.checked = Boolean(node.checked);
  if (node.attrs.disabled !== undefined) out.disabled = true;
  if (node.tag === "a" && node.attrs.href !== undefined) out.href = new URL(node.attrs.href, doc.url).href;
  return out;
}

function isInteractive(node: Node): boolean {
  const type = node.attrs.type?.toLowerCase();
  if (node.tag === "input") return type !== "hidden";
  if (node.tag === "a") return node.attrs.href !== undefined;
  return (
    ["button", "select", "textarea", "summary", "iframe"].includes(node.tag) ||
    ["button", "link", "checkbox", "tab", "menuitem"].includes(node.attrs.role ?? "")
  );
}

function isTextField(node: Node): boolean {
  if (node.tag === "textarea") return true;
  const type = node.attrs.type?.toLowerCase() ?? "text";
  return (
    node.tag === "input" &&
    ["text", "password", "email", "search", "tel", "url", "number", "date"].includes(type)
  );
}

function roleOf(node: Node): string {
  if (node.attrs.role) return node.attrs.role;
  const type = node.attrs.type?.toLowerCase() ?? "text";
  if (node.tag === "a") return "link";
  if (node.tag === "select") return "combobox";
  if (node.tag === "iframe") return "frame";
  if (node.tag === "input") {
    if (type === "checkbox" || type === "radio") return type;
    if (type === "submit" || type === "button" || type === "reset" || type === "image") return "button";
    return "textbox";
  }
  return node.tag === "textarea" ? "textbox" : node.tag === "summary" ? "button" : node.tag;
}

function nameOf(doc: Doc, node: Node): string {
  const a = node.attrs;
  if (a["aria-label"]) return a["aria-label"];
  const id = a.id;
  const label = id ? find(doc.root, (n) => n.tag === "label" && n.attrs.for === id) : undefined;
  const wrapping = ancestor(node, "label");
  const labelText = collapse(textOf(label ?? wrapping ?? { tag: "", attrs: {}, children: [] }, true));
  if (labelText) return labelText.slice(0, 120);
  if (node.tag !== "input" && node.tag !== "select" && node.tag !== "textarea") {
    const own = collapse(textOf(node, true));
    if (own) return own.slice(0, 120);
  }
  return (
    (a.value && /submit|button/i.test(a.type ?? "") ? a.value : undefined) ??
    a.placeholder ??
    a.title ??
    a.name ??
    ""
  );
}

function fieldValue(node: Node): string {
  if (node.value !== undefined) return node.value;
  if (node.tag === "textarea") return textOf(node, true);
  if (node.tag === "select") {
    const options = all(node, (n) => n.tag === "option");
    const chosen = options.find((o) => o.attrs.selected !== undefined) ?? options[0];
    return chosen ? (chosen.attrs.value ?? collapse(textOf(chosen, true))) : "";
  }
  const type = node.attrs.type?.toLowerCase();
  return node.attrs.value ?? (type === "checkbox" || type === "radio" ? "on" : "");
}

function formOf(node: Node): Node | undefined {
  return ancestor(node, "form");
}

function ancestor(node: Node, tag: string): Node | undefined {
  for (let p = node.parent; p; p = p.parent) if (p.tag === tag) return p;
  return undefined;
}

function textOf(node: Node, includeAll: boolean): string {
  let out = "";
  for (const child of node.children) {
    if (typeof child === "string") out += child;
    else if (includeAll || !SKIP_TEXT.has(child.tag)) {
      const inner = textOf(child, includeAll);
      out += BLOCK.test(child.tag) ? `\n${inner}\n` : inner;
    }
  }
  return out;
}

function collapse(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .join("\n");
}

function all(node: Node, test: (n: Node) => boolean, out: Node[] = []): Node[] {
  for (const child of node.children) {
    if (typeof child === "string") continue;
    if (test(child)) out.push(child);
    all(child, test, out);
  }
  return out;
}

function find(node: Node, test: (n: Node) => boolean): Node | undefined {
  return all(node, test)[0];
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "download";
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

function decode(text: string): string {
  return text.replace(/&(#x?[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code =
        name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** A forgiving HTML tokenizer: enough for served fixtures, not a spec parser. */
export function parseHtml(html: string): Node {
  const root: Node = { tag: "#document", attrs: {}, children: [] };
  let open: Node = root;
  const tagRe =
    /<!--[\s\S]*?-->|<!doctype[^>]*>|<\/([a-zA-Z0-9-]+)\s*>|<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(\/?)>/gi;
  let last = 0;
  for (let m = tagRe.exec(html); m; m = tagRe.exec(html)) {
    if (m.index > last) open.children.push(decode(html.slice(last, m.index)));
    last = tagRe.lastIndex;
    const [whole, closing, opening, attrText = "", selfClose] = m;
    if (whole.startsWith("<!")) continue;
    if (closing) {
      const tag = closing.toLowerCase();
      for (let p: Node | undefined = open; p && p !== root; p = p.parent) {
        if (p.tag === tag) {
          open = p.parent ?? root;
          break;
        }
      }
      continue;
    }
    const tag = (opening as string).toLowerCase();
    const attrs: Record<string, string> = {};
    for (const a of attrText.matchAll(/([^\s=>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
      attrs[(a[1] as string).toLowerCase()] = decode(a[2] ?? a[3] ?? a[4] ?? "");
    }
    const node: Node = { tag, attrs, children: [], parent: open };
    if (attrs.checked !== undefined) node.checked = true;
    open.children.push(node);
    if (tag === "script" || tag === "style") {
      const end = html.toLowerCase().indexOf(`</${tag}`, last);
      last = end === -1 ? html.length : end;
      tagRe.lastIndex = last;
      open = node;
      continue;
    }
    if (!VOID.has(tag) && !selfClose) open = node;
  }
  if (last < html.length) open.children.push(decode(html.slice(last)));
  return root;
}
