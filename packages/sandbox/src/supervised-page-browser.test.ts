/** The page browser decoder over a stand-in transport (the real daemon: contacts-export.docker.test.ts). */
import { describe, expect, it } from "vitest";
import { SandboxError } from "./errors.ts";
import { createSupervisedPageBrowser } from "./supervised-page-browser.ts";
import { decodeAnswer, type SupervisorTransport } from "./supervisor-client.ts";

function transport(answer: (method: string, params: unknown) => unknown) {
  const calls: { method: string; params: unknown }[] = [];
  const t: SupervisorTransport = {
    async call(method, params) {
      calls.push({ method, params });
      return decodeAnswer(method, answer(method, params));
    },
  };
  return { t, calls };
}

const snapshot = {
  url: "http://127.0.0.1:8080/",
  title: "Contacts",
  text: "Contacts",
  textTruncated: false,
  elements: [{ ref: "abc123e1", role: "button", name: "Export CSV" }],
  omittedElements: 0,
  frames: 0,
};

describe("createSupervisedPageBrowser", () => {
  it("calls page.* for the bot and decodes navigation, snapshot and act results", async () => {
    const { t, calls } = transport((method) => {
      if (method === "page.navigate") return { ok: true, result: { url: snapshot.url, title: "Contacts" } };
      if (method === "page.snapshot") return { ok: true, result: snapshot };
      return {
        ok: true,
        result: {
          completed: 0,
          total: 1,
          url: snapshot.url,
          title: "Contacts",
          downloads: [{ path: "downloads/contacts.csv", size: 10 }],
          error: { code: "STALE_REF", message: "gone", index: 0, uncertain: false },
        },
      };
    });
    const page = createSupervisedPageBrowser(t);
    expect(await page.navigate("bot", snapshot.url)).toEqual({ url: snapshot.url, title: "Contacts" });
    expect(await page.snapshot("bot")).toEqual(snapshot);
    const act = await page.act("bot", [{ type: "click", ref: "abc123e1" }]);
    expect(act.error).toEqual({ code: "STALE_REF", message: "gone", index: 0, uncertain: false });
    expect(act.downloads).toEqual([{ path: "downloads/contacts.csv", size: 10 }]);
    expect(calls).toEqual([
      { method: "page.navigate", params: { botId: "bot", url: snapshot.url } },
      { method: "page.snapshot", params: { botId: "bot" } },
      { method: "page.act", params: { botId: "bot", actions: [{ type: "click", ref: "abc123e1" }] } },
    ]);
  });

  it("keeps the supervisor's error codes", async () => {
    for (const code of [
      "PAGE_TIMEOUT",
      "DESKTOP_UNAVAILABLE",
      "MULTI_SCREEN_UNAVAILABLE",
      "INVALID_ACTION",
    ]) {
      const { t } = transport(() => ({ ok: false, error: { code, message: "no" } }));
      const error = await createSupervisedPageBrowser(t)
        .navigate("bot", "http://x/")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe(code);
    }
  });

  it("rejects malformed results as SANDBOX_PROVIDER_ERROR", async () => {
    const { t } = transport(() => ({
      ok: true,
      result: { completed: 1, total: 1, url: "u", title: "t", downloads: [{ path: 3 }] },
    }));
    await expect(createSupervisedPageBrowser(t).act("bot", [{ type: "wait", ms: 1 }])).rejects.toMatchObject({
      code: "SANDBOX_PROVIDER_ERROR",
    });
    const bad = transport(() => ({ ok: true, result: { ...snapshot, elements: "none" } }));
    await expect(createSupervisedPageBrowser(bad.t).snapshot("bot")).rejects.toMatchObject({
      code: "SANDBOX_PROVIDER_ERROR",
    });
  });
});
