/**
 * `PageBrowser` over the in-computer supervisor's `page.*` methods (BRW-1): the bot's visible
 * Chromium tab, started with the bot's desktop on first use (CMP-4). Providers supply only a
 * `SupervisorTransport`; error answers arrive as `SandboxError`s with the supervisor's code
 * (`INVALID_ACTION`, `DESKTOP_UNAVAILABLE`, `MULTI_SCREEN_UNAVAILABLE`, `PAGE_TIMEOUT`). Action
 * failures (`STALE_REF`, `TIMEOUT`, …) are part of the act result, not errors.
 */
import type { PageAction, PageBrowser } from "./provider.ts";
import type { SupervisorTransport } from "./supervisor-client.ts";

/** Results arrive validated against the protocol's page result schemas (the transport's `call`). */
export function createSupervisedPageBrowser(transport: SupervisorTransport): PageBrowser {
  return {
    async navigate(botId, url) {
      return transport.call("page.navigate", { botId, url });
    },
    async snapshot(botId) {
      return transport.call("page.snapshot", { botId });
    },
    async act(botId, actions: readonly PageAction[]) {
      return transport.call("page.act", { botId, actions: [...actions] });
    },
  };
}
