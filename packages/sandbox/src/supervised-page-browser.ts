/**
 * `PageBrowser` over the in-computer supervisor's `page.*` methods (BRW-1): the bot's visible
 * Chromium tab, started with the bot's desktop on first use (CMP-4). Providers supply only a
 * `SupervisorTransport`; error answers arrive as `SandboxError`s with the supervisor's code
 * (`INVALID_ACTION`, `DESKTOP_UNAVAILABLE`, `MULTI_SCREEN_UNAVAILABLE`, `PAGE_TIMEOUT`). Action
 * failures (`STALE_REF`, `TIMEOUT`, …) are part of the act result, not errors.
 */
import { SandboxError } from "./errors.ts";
import type {
  PageAction,
  PageActResult,
  PageBrowser,
  PageElement,
  PageNavigation,
  PageSnapshot,
} from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

const ACT_ERROR_CODES = new Set(["STALE_REF", "UNKNOWN_REF", "NOT_ACTIONABLE", "TIMEOUT", "FAILED"]);

function malformed(method: string, what: string): SandboxError {
  return new SandboxError("SANDBOX_PROVIDER_ERROR", `${method}: malformed supervisor result (${what})`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toNavigation(value: unknown): PageNavigation {
  if (!isRecord(value) || typeof value.url !== "string" || typeof value.title !== "string") {
    throw malformed("page.navigate", "navigation");
  }
  return {
    url: value.url,
    title: value.title,
    ...(typeof value.status === "number" ? { status: value.status } : {}),
  };
}

function toElement(value: unknown): PageElement {
  if (!isRecord(value) || typeof value.ref !== "string" || typeof value.role !== "string") {
    throw malformed("page.snapshot", "element");
  }
  return value as unknown as PageElement;
}

function toSnapshot(value: unknown): PageSnapshot {
  if (
    !isRecord(value) ||
    typeof value.url !== "string" ||
    typeof value.title !== "string" ||
    typeof value.text !== "string" ||
    typeof value.textTruncated !== "boolean" ||
    !Array.isArray(value.elements) ||
    typeof value.omittedElements !== "number" ||
    typeof value.frames !== "number"
  ) {
    throw malformed("page.snapshot", "snapshot");
  }
  return { ...(value as unknown as PageSnapshot), elements: value.elements.map(toElement) };
}

function toActResult(value: unknown): PageActResult {
  const method = "page.act";
  if (
    !isRecord(value) ||
    typeof value.completed !== "number" ||
    typeof value.total !== "number" ||
    typeof value.url !== "string" ||
    typeof value.title !== "string" ||
    !Array.isArray(value.downloads)
  ) {
    throw malformed(method, "act result");
  }
  const downloads = value.downloads.map((d: unknown) => {
    if (!isRecord(d) || typeof d.path !== "string" || typeof d.size !== "number") {
      throw malformed(method, "download");
    }
    return { path: d.path, size: d.size };
  });
  const base = {
    completed: value.completed,
    total: value.total,
    url: value.url,
    title: value.title,
    downloads,
  };
  const error = value.error;
  if (error === undefined) return base;
  if (
    !isRecord(error) ||
    typeof error.code !== "string" ||
    !ACT_ERROR_CODES.has(error.code) ||
    typeof error.message !== "string" ||
    typeof error.index !== "number" ||
    typeof error.uncertain !== "boolean"
  ) {
    throw malformed(method, "act error");
  }
  return {
    ...base,
    error: {
      code: error.code as NonNullable<PageActResult["error"]>["code"],
      message: error.message,
      index: error.index,
      uncertain: error.uncertain,
    },
  };
}

export function createSupervisedPageBrowser(transport: SupervisorTransport): PageBrowser {
  return {
    async navigate(botId, url) {
      return toNavigation(await transport.call("page.navigate", { botId, url }));
    },
    async snapshot(botId) {
      return toSnapshot(await transport.call("page.snapshot", { botId }));
    },
    async act(botId, actions: readonly PageAction[]) {
      return toActResult(await transport.call("page.act", { botId, actions }));
    },
  };
}
