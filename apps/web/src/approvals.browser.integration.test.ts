/**
 * The mutation guard's approvals in the web app (BRW-8), in real Chromium against the real API,
 * worker (the scripted Pi model standing in for inference) and Postgres, on a fake-provider Team
 * Computer whose page browser loads a real loopback page. The bot's policy asks before any change
 * but opening that page; its `browser_act` click waits until a person decides in the computer
 * view: Approve (1280×800) runs it once, Deny (390×844) sends nothing to the page and the model
 * reads the denial. The policy editor shows and saves the stored policy. Screenshots under
 * apps/web/test-output/approvals/; axe-core finds no serious or critical violation.
 *
 * Skipped locally (fails under CI=true) without Chromium (scripts/test-tools.sh).
 */
import { mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AxeBuilder } from "@axe-core/playwright";
import {
  type Context,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import type { RakazoClient } from "@rakazo/client";
import { createFakeProvider } from "@rakazo/sandbox";
import { missingOrFail } from "@rakazo/sandbox/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { firstRunSetup, VIEWPORTS } from "./testing/first-run.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const SUITE = "Approving and denying a bot's action in the computer view";
const missing = missingOrFail(SUITE, [CHROMIUM.executablePath]);
const OUTPUT = fileURLToPath(new URL("../test-output/approvals/", import.meta.url));

const PAGE = `<!doctype html><title>Guestbook</title><h1>Guestbook</h1>
<form method="post" action="/comment"><input name="text" value="hello"><button type="submit">Post</button></form>`;

const call = (name: string, args: Record<string, unknown>) =>
  fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" });

function lastResult(context: Context) {
  const last = context.messages.at(-1);
  if (last?.role !== "toolResult") throw new Error("expected a tool result");
  return { isError: last.isError, text: last.content.map((c) => (c.type === "text" ? c.text : "")).join("") };
}

describe.skipIf(missing.length > 0)(
  missing.length > 0 ? `${SUITE} — skipped, missing: ${missing.join(", ")}` : SUITE,
  () => {
    let system: AppSystem;
    let browser: Browser;
    let setupPage: Page;
    let client: RakazoClient;
    let server: http.Server;
    let faux: ReturnType<typeof registerFauxProvider>;
    let pageUrl = "";
    let posts = 0;
    let computerId = "";
    let botId = "";
    /** What the model read after its browser_act. */
    let afterAct: { isError: boolean; text: string } | undefined;

    /** Navigate, snapshot, click "Post" by its ref, then finish. */
    const postAComment = (): FauxResponseFactory[] => [
      () => call("browser_navigate", { url: pageUrl }),
      () => call("browser_snapshot", {}),
      (context) => {
        const ref = /\[([^\]]+)\] button "Post"/.exec(lastResult(context).text)?.[1];
        if (!ref) throw new Error(`no Post button:\n${lastResult(context).text}`);
        return call("browser_act", { actions: [{ type: "click", ref }] });
      },
      (context) => {
        afterAct = lastResult(context);
        return fauxAssistantMessage(fauxText("done"));
      },
    ];

    beforeAll(async () => {
      mkdirSync(OUTPUT, { recursive: true });
      server = http.createServer((req, res) => {
        if (req.method === "POST" && req.url === "/comment") posts += 1;
        res.writeHead(200, { "content-type": "text/html" });
        res.end(req.method === "POST" ? "<!doctype html><title>Posted</title><p>Thanks</p>" : PAGE);
      });
      await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
      pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      faux = registerFauxProvider({ models: [{ id: "approvals-web", input: ["text"] }] });
      system = await startAppSystem({
        provider: async (dir) => createFakeProvider({ rootDir: dir }),
        agent: {
          model: "faux:approvals-web",
          resolvedModel: faux.getModel(),
          apiKeys: {},
          takeoverPollMs: 100,
        },
      });
      browser = await chromium.launch(CHROMIUM);
      setupPage = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      client = system.client(await firstRunSetup(setupPage, system.web.url));
      const spaceId = (await client.call("space/list", {}))[0]?.id ?? "";
      computerId = (await client.call("computer/list", { spaceId }))[0]?.id ?? "";
      botId = (await client.call("bot/list", { spaceId }))[0]?.id ?? "";
      await client.call("computer/start", { computerId });
      const deadline = Date.now() + 30_000;
      while ((await client.call("computer/get", { computerId })).state !== "running") {
        if (Date.now() > deadline) throw new Error("the Team Computer never ran");
        await new Promise((done) => setTimeout(done, 200));
      }
      await client.call("bot/policy/set", {
        botId,
        policy: { mode: "ask", domains: [{ domain: "127.0.0.1", mode: "allow" }] },
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await system?.close();
      faux?.unregister();
      server?.close();
    });

    async function untilRunEnds(runId: string) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const run = await client.call("run/get", { runId });
        if (!["queued", "running", "waiting_approval"].includes(run.status)) return run.status;
        if (Date.now() > deadline) throw new Error(`run still ${run.status}`);
        await new Promise((done) => setTimeout(done, 200));
      }
    }

    const decisions = { desktop: "Approve", phone: "Deny" } as const;

    describe.each(VIEWPORTS)("at $name ($width×$height)", (viewport) => {
      const decision = decisions[viewport.name];
      let page: Page;

      beforeAll(async () => {
        const context = await browser.newContext({
          viewport: { width: viewport.width, height: viewport.height },
          storageState: await setupPage.context().storageState(),
        });
        page = await context.newPage();
        page.on("pageerror", (error) => console.error(`[${viewport.name}] page error: ${error.message}`));
        await page.goto(`${system.web.url}/#/computers/${computerId}`);
      });
      afterAll(() => page?.context().close());

      it(`${decision}: the waiting browser_act is shown with its action, and the decision reaches the run`, async () => {
        posts = 0;
        afterAct = undefined;
        faux.setResponses(postAComment());
        const run = await client.call("agent/run", { computerId, botId, task: "Post a comment." });

        const notice = page.getByTestId("approval-notice");
        await notice.waitFor({ timeout: 20_000 });
        expect(await notice.textContent()).toMatch(/browser_act click \S+/);
        expect(await notice.getByRole("heading").textContent()).toContain("asks before it acts");
        expect((await client.call("run/get", { runId: run.id })).status).toBe("waiting_approval");
        expect(posts).toBe(0);
        await page.screenshot({ path: path.join(OUTPUT, `${viewport.name}-waiting.png`), fullPage: true });
        const axe = await new AxeBuilder({ page }).analyze();
        const bad = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
        expect(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);

        await notice.getByRole("button", { name: decision, exact: true }).click();
        await page
          .getByRole("status")
          .filter({ hasText: decision === "Approve" ? "Approved" : "Denied" })
          .waitFor({ timeout: 10_000 });
        expect(await untilRunEnds(run.id)).toBe("completed");
        await notice.waitFor({ state: "detached", timeout: 10_000 });
        await page.screenshot({ path: path.join(OUTPUT, `${viewport.name}-decided.png`) });
        if (decision === "Approve") {
          expect(posts).toBe(1);
          expect(afterAct).toMatchObject({ isError: false });
        } else {
          expect(posts).toBe(0);
          expect(afterAct).toMatchObject({
            isError: true,
            text: expect.stringContaining("A person denied this action"),
          });
        }
      }, 90_000);

      it("the policy editor shows the stored policy and saves a change", async () => {
        await page.getByText("What", { exact: false }).filter({ hasText: "may change" }).first().click();
        const domains = page.getByLabel(/Web pages by domain/);
        expect(await domains.inputValue()).toBe("127.0.0.1 allow");
        await page.getByLabel("Every change").selectOption("ask");
        await domains.fill("127.0.0.1 allow\nexample.test deny");
        await page.getByRole("button", { name: "Save policy", exact: true }).click();
        await page.getByRole("status").filter({ hasText: "Policy saved" }).waitFor({ timeout: 10_000 });
        expect((await client.call("bot/policy/get", { botId })).policy.domains).toEqual([
          { domain: "127.0.0.1", mode: "allow" },
          { domain: "example.test", mode: "deny" },
        ]);
        // A line that is not a rule is refused before anything is sent.
        await domains.fill("example.test sometimes");
        await page.getByRole("button", { name: "Save policy", exact: true }).click();
        await page
          .getByRole("alert")
          .filter({ hasText: "example.test sometimes" })
          .waitFor({ timeout: 5_000 });
        await domains.fill("127.0.0.1 allow");
        await page.getByRole("button", { name: "Save policy", exact: true }).click();
        await page.getByRole("status").filter({ hasText: "Policy saved" }).waitFor({ timeout: 10_000 });
        await page.screenshot({ path: path.join(OUTPUT, `${viewport.name}-policy.png`) });
      }, 60_000);
    });
  },
);
