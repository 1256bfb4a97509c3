/**
 * The page emulator's DOM: served HTML parsed by linkedom (a maintained, spec-shaped DOM), plus
 * the questions the emulator asks of it (which elements are interactive, their role, name,
 * value, the visible text). Form state the person changes (values, checks) is kept beside the
 * tree, per element, so the markup's defaults stay readable for form submission rules.
 */
import { parseHTML } from "linkedom";
import type { PageElement } from "../../provider.ts";

/** The slice of the DOM the emulator uses (the repo type-checks without the DOM library). */
export interface El {
  readonly tagName: string;
  readonly nodeType: number;
  readonly childNodes: ArrayLike<El>;
  readonly textContent: string | null;
  readonly isConnected: boolean;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selector: string): El | null;
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): ArrayLike<El>;
}

export interface Doc {
  id: string;
  url: string;
  title: string;
  status: number;
  document: El;
  refs: Map<string, El>;
  refOf: WeakMap<El, string>;
  /** Live form state; absent entries read from the markup. */
  values: WeakMap<El, string>;
  checks: WeakMap<El, boolean>;
  nextRef: number;
}

/**
 * What counts as interactive: the same selector the real browser's page helper uses
 * (infra/sandboxes/supervisor/src/page/helper.ts), so both list the same elements.
 */
const INTERACTIVE =
  "a[href],button,input:not([type=hidden]),select,textarea,summary,iframe,frame,[role=button],[role=link]," +
  "[role=checkbox],[role=tab],[role=menuitem],[role=textbox],[contenteditable=''],[contenteditable=true]";

const HIDDEN_TEXT = new Set([
  "SCRIPT",
  "STYLE",
  "TEMPLATE",
  "NOSCRIPT",
  "HEAD",
  "SELECT",
  "TEXTAREA",
  "OPTION",
]);
const BLOCK =
  /^(P|DIV|LI|TR|H[1-6]|SECTION|ARTICLE|HEADER|FOOTER|FORM|TABLE|UL|OL|BR|LABEL|MAIN|NAV|BUTTON|A)$/;
const TEXT_TYPES = ["text", "password", "email", "search", "tel", "url", "number", "date", ""];
const MASKED_VALUE = "••••";

export function parsePage(html: string): El {
  return parseHTML(html).document as unknown as El;
}

const tag = (el: El) => el.tagName.toLowerCase();
const typeOf = (el: El) => (el.getAttribute("type") ?? "").toLowerCase();

/** Not rendered: `hidden`, or an inline `display:none` / `visibility:hidden` on it or above. */
function isHidden(el: El): boolean {
  for (let p: El | null = el; p; p = parentOf(p)) {
    if (p.hasAttribute("hidden")) return true;
    const style = (p.getAttribute("style") ?? "").replace(/\s+/g, "").toLowerCase();
    if (style.includes("display:none") || style.includes("visibility:hidden")) return true;
  }
  return false;
}

function parentOf(el: El): El | null {
  return (el as unknown as { parentElement: El | null }).parentElement;
}

export function interactiveElements(document: El): El[] {
  const body = document.querySelector("body") ?? document;
  return Array.from(body.querySelectorAll(INTERACTIVE)).filter((el) => !isHidden(el));
}

export function describe(doc: Doc, el: El, ref: string): PageElement {
  const type = typeOf(el);
  const out: { -readonly [K in keyof PageElement]: PageElement[K] } = {
    ref,
    role: roleOf(el),
    name: nameOf(doc, el),
  };
  if (isTextField(el) || tag(el) === "select")
    out.value = type === "password" ? (fieldValue(doc, el) ? MASKED_VALUE : "") : fieldValue(doc, el);
  if (type === "checkbox" || type === "radio") out.checked = isChecked(doc, el);
  if (el.hasAttribute("disabled")) out.disabled = true;
  if (tag(el) === "a" && el.hasAttribute("href"))
    out.href = new URL(el.getAttribute("href") ?? "", doc.url).href;
  return out;
}

export function isTextField(el: El): boolean {
  if (tag(el) === "textarea") return true;
  return tag(el) === "input" && TEXT_TYPES.includes(typeOf(el));
}

function roleOf(el: El): string {
  const explicit = el.getAttribute("role");
  if (explicit) return explicit;
  const type = typeOf(el) || "text";
  switch (tag(el)) {
    case "a":
      return "link";
    case "select":
      return "combobox";
    case "iframe":
    case "frame":
      return "frame";
    case "textarea":
      return "textbox";
    case "summary":
      return "button";
    case "input":
      if (type === "checkbox" || type === "radio") return type;
      if (["submit", "button", "reset", "image"].includes(type)) return "button";
      return "textbox";
  }
  const editable = el.getAttribute("contenteditable");
  if (editable === "" || editable === "true") return "textbox";
  return tag(el);
}

function nameOf(doc: Doc, el: El): string {
  const aria = el.getAttribute("aria-label");
  if (aria) return aria;
  const labelledBy = el.getAttribute("aria-labelledby");
  const byId = (id: string) =>
    Array.from(doc.document.querySelectorAll("[id]")).find((n) => n.getAttribute("id") === id);
  if (labelledBy) return collapse(textOf(byId(labelledBy) ?? null, true));
  const id = el.getAttribute("id");
  const label =
    (id
      ? Array.from(doc.document.querySelectorAll("label[for]")).find((l) => l.getAttribute("for") === id)
      : undefined) ?? el.closest("label");
  const labelText = collapse(textOf(label ?? null, true));
  if (labelText) return labelText.slice(0, 120);
  if (!["input", "select", "textarea"].includes(tag(el))) {
    const own = collapse(textOf(el, true));
    if (own) return own.slice(0, 120);
  }
  const value = el.getAttribute("value");
  if (tag(el) === "input" && ["submit", "button", "reset"].includes(typeOf(el)) && value) return value;
  return el.getAttribute("placeholder") ?? el.getAttribute("title") ?? el.getAttribute("name") ?? "";
}

export function options(el: El): El[] {
  return Array.from(el.querySelectorAll("option"));
}

export function optionValue(option: El): string {
  return option.getAttribute("value") ?? collapse(textOf(option, true));
}

export function fieldValue(doc: Doc, el: El): string {
  const live = doc.values.get(el);
  if (live !== undefined) return live;
  if (tag(el) === "textarea") return el.textContent ?? "";
  if (tag(el) === "select") {
    const all = options(el);
    const chosen = all.find((o) => o.hasAttribute("selected")) ?? all[0];
    return chosen ? optionValue(chosen) : "";
  }
  const type = typeOf(el);
  return el.getAttribute("value") ?? (type === "checkbox" || type === "radio" ? "on" : "");
}

export function isChecked(doc: Doc, el: El): boolean {
  return doc.checks.get(el) ?? el.hasAttribute("checked");
}

/** Visible text with block elements on their own lines, like a browser's `innerText`. */
export function textOf(el: El | null, includeAll: boolean): string {
  if (!el) return "";
  let out = "";
  for (const child of Array.from(el.childNodes)) {
    if (child.nodeType === 3) out += child.textContent ?? "";
    else if (child.nodeType === 1 && (includeAll || !HIDDEN_TEXT.has(child.tagName))) {
      if (!includeAll && isHidden(child)) continue;
      const inner = textOf(child, includeAll);
      out += BLOCK.test(child.tagName) ? `\n${inner}\n` : inner;
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

export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_") || "download";
}
