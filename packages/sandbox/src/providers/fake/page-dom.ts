/**
 * The page emulator's DOM: a forgiving HTML parser into a small node tree, and the questions the
 * emulator asks of it (is it interactive, what is its role, name, value, visible text).
 */
import type { PageElement } from "../../provider.ts";

export interface Node {
  tag: string;
  attrs: Record<string, string>;
  children: (Node | string)[];
  parent?: Node;
  /** Live form state; starts from the markup. */
  value?: string;
  checked?: boolean;
}

export interface Doc {
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

export function describe(doc: Doc, node: Node, ref: string): PageElement {
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

export function isInteractive(node: Node): boolean {
  const type = node.attrs.type?.toLowerCase();
  if (node.tag === "input") return type !== "hidden";
  if (node.tag === "a") return node.attrs.href !== undefined;
  return (
    ["button", "select", "textarea", "summary", "iframe"].includes(node.tag) ||
    ["button", "link", "checkbox", "tab", "menuitem"].includes(node.attrs.role ?? "")
  );
}

export function isTextField(node: Node): boolean {
  if (node.tag === "textarea") return true;
  const type = node.attrs.type?.toLowerCase() ?? "text";
  return (
    node.tag === "input" &&
    ["text", "password", "email", "search", "tel", "url", "number", "date"].includes(type)
  );
}

export function roleOf(node: Node): string {
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

export function nameOf(doc: Doc, node: Node): string {
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

export function fieldValue(node: Node): string {
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

export function formOf(node: Node): Node | undefined {
  return ancestor(node, "form");
}

export function ancestor(node: Node, tag: string): Node | undefined {
  for (let p = node.parent; p; p = p.parent) if (p.tag === tag) return p;
  return undefined;
}

export function textOf(node: Node, includeAll: boolean): string {
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

export function collapse(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .join("\n");
}

export function all(node: Node, test: (n: Node) => boolean, out: Node[] = []): Node[] {
  for (const child of node.children) {
    if (typeof child === "string") continue;
    if (test(child)) out.push(child);
    all(child, test, out);
  }
  return out;
}

export function find(node: Node, test: (n: Node) => boolean): Node | undefined {
  return all(node, test)[0];
}

export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "download";
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

export function decode(text: string): string {
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
