/**
 * browser_navigate, browser_snapshot, browser_act (BRW-1..6): the bot's page as text and element
 * refs. Navigations and actions are mutations (BRW-8): guarded, recorded, checkpointed.
 */
import type { PageAction, PageActResult, PageSnapshot } from "@rakazo/sandbox";
import {
  actOnPage,
  describePageAction,
  navigatePage,
  pathsForBot,
  snapshotPage,
} from "../services-internal.ts";
import { fence } from "../session.ts";
import { defineTool, mutate, type ToolFactory, text } from "./common.ts";

const DESKTOP_FALLBACK_VISION = "use computer_observe/computer_act for it";
const DESKTOP_FALLBACK_BLIND = "call request_takeover and say what a person must do";

function pageTarget(session: Parameters<ToolFactory>[0]) {
  return { ...fence(session), ...(session.browser ? { browser: session.browser } : {}) };
}

export function formatSnapshot(snapshot: PageSnapshot, vision: boolean): string {
  const lines = [`URL: ${snapshot.url}`, `Title: ${snapshot.title}`, "", "Interactive elements:"];
  for (const e of snapshot.elements) {
    const extras = [
      e.value !== undefined ? `value=${JSON.stringify(e.value)}` : "",
      e.checked !== undefined ? (e.checked ? "checked" : "unchecked") : "",
      e.disabled ? "disabled" : "",
      e.href ? `→ ${e.href}` : "",
    ].filter(Boolean);
    lines.push(
      `[${e.ref}] ${e.role} ${JSON.stringify(e.name)}${extras.length ? ` ${extras.join(" ")}` : ""}`,
    );
  }
  if (snapshot.elements.length === 0) lines.push("(none)");
  if (snapshot.omittedElements > 0) {
    lines.push(
      `(${snapshot.omittedElements} more elements not listed; scroll with browser_act and snapshot again)`,
    );
  }
  if (snapshot.frames > 0) {
    lines.push(
      `(${snapshot.frames} frame(s) on this page are not included; to work inside a frame, ${vision ? DESKTOP_FALLBACK_VISION : DESKTOP_FALLBACK_BLIND})`,
    );
  }
  lines.push("", "Page text:", snapshot.text || "(no text)");
  if (snapshot.textTruncated) lines.push("[… page text cut]");
  return lines.join("\n");
}

export function formatActResult(result: PageActResult): string {
  const lines = [`Page: ${result.url} — ${result.title}`];
  if (!result.error) lines.unshift(`Completed ${result.completed} of ${result.total} actions.`);
  else {
    lines.unshift(
      `Action ${result.error.index + 1} of ${result.total} failed (${result.error.code}): ${result.error.message}. ` +
        `The ${result.completed} action(s) before it completed; nothing after it ran.` +
        (result.error.uncertain
          ? " Its outcome is UNCERTAIN: it may have taken effect. Take a browser_snapshot and check before repeating anything."
          : ""),
    );
    if (result.error.code === "STALE_REF")
      lines.push("Refs are valid for one page only: take a new browser_snapshot.");
  }
  for (const d of result.downloads) lines.push(`Downloaded ${d.path} (${d.size} bytes).`);
  return lines.join("\n");
}

export const browserNavigate: ToolFactory = (session) =>
  defineTool(
    "browser_navigate",
    "Open a web page",
    "Open a URL in your browser tab. Then call browser_snapshot to read it.",
    async ({ url }) =>
      mutate(
        session,
        "browser_navigate",
        { url },
        async () => {
          const page = await navigatePage(session.ctx, session.caller, { ...pageTarget(session), url });
          return {
            value: text(
              `Opened ${page.url} — ${page.title}${page.status && page.status >= 400 ? ` (HTTP ${page.status})` : ""}`,
              page,
            ),
            activity: {
              line: `browser_navigate ${page.url}`,
              details: { url: page.url, status: page.status },
            },
          };
        },
        () => ({ line: `browser_navigate ${url}` }),
      ),
  );

export const browserSnapshot: ToolFactory = (session) =>
  defineTool(
    "browser_snapshot",
    "Read the web page",
    "Read your browser tab: URL, title, page text, and up to 80 interactive elements with refs " +
      "(like [a1b2c3e4]) for browser_act. Refs are valid only until the page changes. Password values are hidden.",
    async () => {
      const snapshot = await snapshotPage(session.ctx, session.caller, pageTarget(session));
      return text(formatSnapshot(snapshot, session.model.vision), {
        url: snapshot.url,
        elements: snapshot.elements.length,
        omittedElements: snapshot.omittedElements,
      });
    },
  );

export const browserAct: ToolFactory = (session) =>
  defineTool(
    "browser_act",
    "Act on the web page",
    "Click, fill, select, check, press keys or scroll on your browser tab using refs from the latest " +
      "browser_snapshot, in order. A failed action stops the batch; the result says which actions " +
      "completed and whether the failed one may have taken effect. Nothing is retried for you. " +
      `For anything page tools cannot do, ${session.model.vision ? DESKTOP_FALLBACK_VISION : DESKTOP_FALLBACK_BLIND}.`,
    async ({ actions }) => {
      const list = actions as PageAction[];
      const summary = list.map(describePageAction).join(", ");
      return mutate(
        session,
        "browser_act",
        { actions: list },
        async () => {
          const acted = await actOnPage(session.ctx, session.caller, {
            ...pageTarget(session),
            actions: list,
          });
          // Downloads are named as the bot names paths: relative to its folder (CMP-1).
          const seen = await pathsForBot(
            session.ctx,
            fence(session),
            acted.downloads.map((d) => d.path),
          );
          const result = {
            ...acted,
            downloads: acted.downloads.map((d, i) => ({ ...d, path: seen[i] ?? d.path })),
          };
          const status = result.error
            ? ` → failed at ${result.error.index + 1}/${result.total} (${result.error.code}${result.error.uncertain ? ", uncertain" : ""})`
            : ` → ${result.completed}/${result.total}`;
          const downloads = result.downloads.map((d) => `, downloaded ${d.path} (${d.size} bytes)`).join("");
          return {
            value: { ...text(formatActResult(result), result) },
            activity: {
              line: `browser_act ${summary}${status}${downloads}`,
              ok: !result.error,
              details: {
                completed: result.completed,
                total: result.total,
                url: result.url,
                ...(result.error ? { uncertain: result.error.uncertain } : {}),
              },
              ...(result.error ? {} : {}),
            },
          };
        },
        () => ({ line: `browser_act ${summary}` }),
      );
    },
  );
