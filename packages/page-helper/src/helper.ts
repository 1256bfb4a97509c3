/**
 * The page helper (BRW-3): evaluated in an isolated script world of the bot's tab, so the page's
 * own scripts can neither see nor tamper with it. It keeps one ref table per document: refs
 * carry the document's random id, so a ref from before a navigation can never name an element
 * of the new page, and a ref whose element was removed or replaced fails instead of being
 * retargeted. Password values never leave this function.
 *
 * `installHelper` is serialized with Function#toString and must stay self-contained JavaScript.
 */

export const HELPER_WORLD = "rakazo-page-helper";

// The supervisor type-checks without the DOM library; inside the browser these are the real globals.
// biome-ignore lint/suspicious/noExplicitAny: DOM objects, typed by the browser, not by this package
type DomEl = any;
declare const document: DomEl;
declare const location: DomEl;
declare const window: DomEl;
declare const Event: DomEl;
declare function getComputedStyle(el: DomEl): DomEl;
declare function getSelection(): DomEl;

/* c8 ignore start — runs inside the browser */
export function installHelper(): void {
  const g = globalThis as unknown as { __rakazo?: unknown };
  if (g.__rakazo) return;
  const docId = Array.from(crypto.getRandomValues(new Uint8Array(3)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
  const byRef = new Map<string, DomEl>();
  const refOf = new WeakMap<DomEl, string>();
  let next = 1;
  const SELECTOR =
    "a[href],button,input:not([type=hidden]),select,textarea,summary,iframe,frame,[role=button],[role=link]," +
    "[role=checkbox],[role=tab],[role=menuitem],[role=textbox],[contenteditable=''],[contenteditable=true]";

  const visible = (el: DomEl) => {
    const style = getComputedStyle(el);
    return el.getClientRects().length > 0 && style.visibility !== "hidden" && style.display !== "none";
  };
  const textOf = (el: DomEl | null) => (el?.textContent ?? "").replace(/\s+/g, " ").trim();
  const roleOf = (el: DomEl) => {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit;
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") ?? "text").toLowerCase();
    if (tag === "a") return "link";
    if (tag === "select") return "combobox";
    if (tag === "iframe" || tag === "frame") return "frame";
    if (tag === "textarea") return "textbox";
    if (tag === "summary") return "button";
    if (tag === "input") {
      if (type === "checkbox" || type === "radio") return type;
      if (["submit", "button", "reset", "image"].includes(type)) return "button";
      return "textbox";
    }
    if ((el as DomEl).isContentEditable) return "textbox";
    return tag;
  };
  const nameOf = (el: DomEl) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    const labelled = el.getAttribute("aria-labelledby");
    if (labelled) return textOf(document.getElementById(labelled));
    const labels = (el as DomEl).labels;
    if (labels && labels.length > 0) return textOf(labels[0] ?? null);
    const tag = el.tagName.toLowerCase();
    if (tag !== "input" && tag !== "select" && tag !== "textarea") {
      const own = textOf(el);
      if (own) return own.slice(0, 120);
    }
    const input = el as DomEl;
    if (tag === "input" && ["submit", "button", "reset"].includes(input.type) && input.value)
      return input.value;
    return el.getAttribute("placeholder") ?? el.getAttribute("title") ?? el.getAttribute("name") ?? "";
  };
  const resolve = (ref: string): DomEl => {
    const el = byRef.get(ref);
    if (!el) {
      if (/^[0-9a-f]{6}e\d+$/.test(ref) && !ref.startsWith(docId)) {
        return {
          error: { code: "STALE_REF", message: `ref ${ref} is from an earlier page; take a new snapshot` },
        };
      }
      return { error: { code: "UNKNOWN_REF", message: `ref ${ref} was not in a snapshot of this page` } };
    }
    if (!el.isConnected) {
      return {
        error: {
          code: "STALE_REF",
          message: `the element of ref ${ref} was removed or replaced; take a new snapshot`,
        },
      };
    }
    return el;
  };
  const notActionable = (message: string) => ({ error: { code: "NOT_ACTIONABLE", message } });
  const isTextField = (el: DomEl) =>
    el.tagName === "TEXTAREA" ||
    (el as DomEl).isContentEditable ||
    (el.tagName === "INPUT" &&
      ["text", "password", "email", "search", "tel", "url", "number", "date", ""].includes(
        (el as DomEl).type,
      ));

  g.__rakazo = {
    snapshot(maxElements: number, maxText: number) {
      // biome-ignore lint/performance/useDomNodeTextContent: innerText is the visible text, which is what a snapshot shows
      const text = (document.body?.innerText ?? "")
        .replace(/[ \t]+/g, " ")
        .replace(/\n\s*\n+/g, "\n")
        .trim();
      const all = Array.from(document.querySelectorAll(SELECTOR) as DomEl[]).filter(visible);
      const elements = all.slice(0, maxElements).map((el) => {
        let ref = refOf.get(el);
        if (!ref) {
          ref = `${docId}e${next++}`;
          refOf.set(el, ref);
          byRef.set(ref, el);
        }
        const out: Record<string, unknown> = { ref, role: roleOf(el), name: nameOf(el) };
        const input = el as DomEl;
        if (el.tagName === "SELECT" || (isTextField(el) && !input.isContentEditable)) {
          out.value = input.type === "password" ? (input.value ? "••••" : "") : input.value;
        }
        if (input.type === "checkbox" || input.type === "radio") out.checked = input.checked;
        if ((el as DomEl).disabled) out.disabled = true;
        if (el.tagName === "A") out.href = (el as DomEl).href;
        return out;
      });
      return {
        url: location.href,
        title: document.title,
        text: text.slice(0, maxText),
        textTruncated: text.length > maxText,
        elements,
        omittedElements: Math.max(0, all.length - maxElements),
        frames: document.querySelectorAll("iframe,frame").length,
      };
    },
    /** Scrolls the element into view and returns the point a click should hit. */
    point(ref: string) {
      const el = resolve(ref);
      if ("error" in el) return el;
      if ((el as DomEl).disabled) return notActionable(`${ref} is disabled`);
      if (el.tagName === "IFRAME" || el.tagName === "FRAME")
        return notActionable("frames need desktop tools");
      el.scrollIntoView({ block: "center", inline: "center" });
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return notActionable(`${ref} is not visible`);
      const x = r.left + r.width / 2;
      const y = r.top + r.height / 2;
      const hit = document.elementFromPoint(x, y);
      if (hit && hit !== el && !el.contains(hit) && !hit.contains(el)) {
        return notActionable(`${ref} is covered by another element (${hit.tagName.toLowerCase()})`);
      }
      return { x, y };
    },
    /** Focuses a text field and selects its content, so inserted text replaces it. */
    focusForFill(ref: string) {
      const el = resolve(ref);
      if ("error" in el) return el;
      if (!isTextField(el)) return notActionable(`${ref} is not a text field`);
      if ((el as DomEl).disabled || (el as DomEl).readOnly) return notActionable(`${ref} is read-only`);
      (el as DomEl).focus();
      if ((el as DomEl).isContentEditable) {
        const range = document.createRange();
        range.selectNodeContents(el);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      } else (el as DomEl).select();
      return { ok: true };
    },
    clear(ref: string) {
      const el = resolve(ref);
      if ("error" in el) return el;
      (el as DomEl).value = "";
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
      return { ok: true };
    },
    focus(ref: string) {
      const el = resolve(ref);
      if ("error" in el) return el;
      (el as DomEl).focus();
      return { ok: true };
    },
    select(ref: string, value: string) {
      const el = resolve(ref);
      if ("error" in el) return el;
      if (el.tagName !== "SELECT") return notActionable(`${ref} is not a select`);
      const select = el as DomEl;
      const option = Array.from(select.options as DomEl[]).find(
        (o: DomEl) => o.value === value || o.text.trim() === value,
      );
      if (!option) return notActionable(`no option ${JSON.stringify(value)}`);
      select.value = option.value;
      select.dispatchEvent(new Event("input", { bubbles: true }));
      select.dispatchEvent(new Event("change", { bubbles: true }));
      return { ok: true };
    },
    checked(ref: string) {
      const el = resolve(ref);
      if ("error" in el) return el;
      const input = el as DomEl;
      if (input.type !== "checkbox" && input.type !== "radio")
        return notActionable(`${ref} is not a checkbox`);
      return { checked: input.checked };
    },
    scroll(dy: number) {
      window.scrollBy(0, dy);
      return { ok: true };
    },
    title() {
      return { url: location.href, title: document.title };
    },
  };
}
/* c8 ignore stop */
