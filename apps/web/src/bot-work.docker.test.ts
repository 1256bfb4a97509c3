/**
 * Bots at work in the computer view, in real Chromium against the real API, worker and a Docker
 * computer, with pi-ai's scripted (faux) model standing in for inference: a task typed in the
 * task box runs; its transcript shows each tool call live (while the run still works) and again
 * after a reload; Stop ends a run; the history lists every run with its outcome and tool calls;
 * a `request_takeover` shows its reason on the computer view and in the space's computer list,
 * Take control works from the notice and Hand back resumes the same run to completion. axe-core
 * finds no serious or critical violation at 1280×800 and 390×844; screenshots go to
 * apps/web/test-output/bot-work/.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AxeBuilder } from "@axe-core/playwright";
import {
  type AssistantMessage,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { createProvider } from "@rakazo/sandbox";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppSystem, startAppSystem } from "./testing/app-system.ts";
import { firstRunSetup, VIEWPORTS } from "./testing/first-run.ts";
import { CHROMIUM } from "./testing/screen-system.ts";

const gate = await requireDocker("bots at work in the computer view", [CHROMIUM.executablePath]);
const OUTPUT = fileURLToPath(new URL("../test-output/bot-work/", import.meta.url));

const call = (name: string, args: Record<string, unknown>): AssistantMessage =>
  fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" });

/** A model turn that waits until the test lets it answer (the run stays "working" meanwhile). */
function held(answer: AssistantMessage) {
  let release = () => {};
  const released = new Promise<void>((done) => {
    release = done;
  });
  return {
    step: async () => {
      await released;
      return answer;
    },
    release: () => release(),
  };
}

describe.skipIf(gate.skip)(gate.title, () => {
  let system: AppSystem;
  let browser: Browser;
  let faux: ReturnType<typeof registerFauxProvider>;
  let token = "";
  let computerId = "";
  let page: Page;

  async function axe(target: Page, what: string) {
    const result = await new AxeBuilder({ page: target }).analyze();
    const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(
      bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
      what,
    ).toEqual([]);
  }
  const shot = (target: Page, name: string) =>
    target.screenshot({ path: `${OUTPUT}${name}.png`, fullPage: true });
  const transcript = () => page.getByTestId("transcript");
  const history = () => page.getByTestId("run-history");

  beforeAll(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    faux = registerFauxProvider({ models: [{ id: "bot-work", input: ["text", "image"] }] });
    system = await startAppSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
      agent: { model: "faux:bot-work", resolvedModel: faux.getModel(), apiKeys: {}, takeoverPollMs: 200 },
    });
    browser = await chromium.launch(CHROMIUM);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
    token = await firstRunSetup(page, system.web.url);
    const client = system.client(token);
    const spaceId = (await client.call("space/list", {}))[0]?.id ?? "";
    computerId = (await client.call("computer/list", { spaceId }))[0]?.id ?? "";
    await client.call("computer/start", { computerId });
    const deadline = Date.now() + 150_000;
    while ((await client.call("computer/get", { computerId })).state !== "running") {
      if (Date.now() > deadline) throw new Error(`the Team Computer ${computerId} never ran`);
      await new Promise((done) => setTimeout(done, 500));
    }
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (system && token && computerId) {
      const client = system.client(token);
      await client.call("computer/delete", { computerId }).catch(() => undefined);
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        const c = await client.call("computer/get", { computerId }).catch(() => undefined);
        if (!c || c.state === "deleted") break;
        await new Promise((done) => setTimeout(done, 1000));
      }
    }
    await system?.close();
    faux?.unregister();
  }, 180_000);

  it("runs a typed task; its transcript shows each tool call live and again after a reload", async () => {
    const hold = held(call("computer_observe", {}));
    faux.setResponses([
      fauxAssistantMessage(
        [fauxText("First a marker in the shell."), fauxToolCall("shell", { command: "echo marker-41" })],
        {
          stopReason: "toolUse",
        },
      ),
      hold.step,
      fauxAssistantMessage(fauxText("Done: the marker is written and the screen looked at.")),
    ]);
    await page.goto(`${system.web.url}/#/computers/${computerId}`);
    await page.getByLabel("Task for", { exact: false }).fill("Echo a marker, then look at the screen.");
    await shot(page, "task-box");
    await axe(page, "task box");
    await page.getByRole("button", { name: "Start", exact: true }).click();

    // Live: the shell call is there while the run still works (the model's next turn is held).
    await transcript().getByText("marker-41").first().waitFor({ timeout: 60_000 });
    await expect.poll(() => page.getByText("is working.").count()).toBe(1);
    await expect.poll(() => transcript().getByTestId("transcript-tool").count()).toBe(1);
    expect(await transcript().getByTestId("transcript-tool").first().textContent()).toContain("shell");

    // A reload reads it back from the stored transcript.
    await page.reload();
    await transcript().getByText("marker-41").first().waitFor({ timeout: 30_000 });
    expect(await transcript().textContent()).toContain("First a marker in the shell.");
    hold.release();

    // The observation arrives live, with its thumbnail; then the run completes.
    await transcript().locator('[data-status="completed"]').waitFor({ timeout: 60_000 });
    expect(await transcript().getByTestId("transcript-tool").allTextContents()).toEqual([
      expect.stringContaining("shell"),
      expect.stringContaining("computer_observe"),
    ]);
    const thumbnail = transcript().locator("img.thumbnail");
    expect(await thumbnail.count()).toBe(1);
    expect(
      await thumbnail.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
    ).toBeLessThanOrEqual(320);
    await page.reload();
    await transcript().locator('[data-status="completed"]').waitFor({ timeout: 30_000 });
    expect(await transcript().getByTestId("transcript-tool").count()).toBe(2);
    await shot(page, "transcript");
    await axe(page, "transcript");
  }, 180_000);

  it("Stop ends a working run and the history lists it", async () => {
    const hold = held(fauxAssistantMessage(fauxText("I was stopped.")));
    faux.setResponses([hold.step]);
    await page.getByLabel("Task for", { exact: false }).fill("Think for a long time.");
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await page.getByRole("button", { name: "Stop the run", exact: true }).click();
    await transcript().locator('[data-status="canceled"]').waitFor({ timeout: 30_000 });
    hold.release();
    await page.getByLabel("Task for", { exact: false }).waitFor();
    await expect.poll(() => history().locator("li").first().getAttribute("data-status")).toBe("canceled");
    expect(await history().locator("li").first().textContent()).toContain("Stopped");
    // Opening the earlier run shows its transcript again.
    await history().locator("li").nth(1).getByRole("button").click();
    await transcript().getByText("marker-41").first().waitFor({ timeout: 30_000 });
    expect(await history().locator("li").nth(1).textContent()).toContain("2 tool calls");
  }, 120_000);

  it("a takeover request shows its reason; Take control from the notice; Hand back finishes the run", async () => {
    faux.setResponses([
      call("request_takeover", { reason: "Please sign in to the mail account" }),
      fauxAssistantMessage(fauxText("Signed in by the person; finished.")),
    ]);
    await page.getByLabel("Task for", { exact: false }).fill("Read the newest mail.");
    await page.getByRole("button", { name: "Start", exact: true }).click();
    const notice = page.getByTestId("takeover-notice");
    await notice.waitFor({ timeout: 60_000 });
    expect(await notice.textContent()).toContain("Please sign in to the mail account");
    await shot(page, "takeover-notice");
    await axe(page, "takeover notice");

    // The space's computer list shows it too, and leads back to the computer.
    await page.goto(`${system.web.url}/#/`);
    const listed = page.getByTestId("waiting-runs");
    await listed.waitFor({ timeout: 30_000 });
    expect(await listed.textContent()).toContain("Please sign in to the mail account");
    await shot(page, "waiting-list");
    await axe(page, "space list with a waiting run");
    await listed.getByRole("link").click();

    await notice.getByRole("button", { name: "Take control", exact: true }).click();
    await expect.poll(() => page.getByTestId("control-state").textContent()).toContain("control");
    await notice.getByRole("button", { name: /^Hand back to / }).click();
    await transcript().locator('[data-status="completed"]').waitFor({ timeout: 60_000 });
    const statuses = await transcript()
      .locator("[data-status]")
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-status")));
    expect(statuses).toEqual(["running", "waiting_takeover", "resumed", "completed"]);
    expect(await notice.count()).toBe(0);
    await expect.poll(() => history().locator("li").first().getAttribute("data-status")).toBe("completed");
    expect(await history().locator("li").count()).toBe(3);
  }, 180_000);

  it.each(VIEWPORTS)(
    "has no serious or critical axe violation at $name ($width×$height)",
    async (viewport) => {
      const other = await (await browser.newContext({ viewport })).newPage();
      try {
        await other.goto(system.web.url);
        await other.getByLabel("API token").fill(token);
        await other.getByRole("button", { name: "Sign in", exact: true }).click();
        await other.getByRole("heading", { name: "Spaces" }).waitFor();
        await other.goto(`${system.web.url}/#/computers/${computerId}`);
        await other.getByTestId("run-history").locator("li").nth(2).waitFor({ timeout: 30_000 });
        await other
          .getByTestId("transcript")
          .locator('[data-status="completed"]')
          .waitFor({ timeout: 30_000 });
        await shot(other, `view-${viewport.name}`);
        await axe(other, `computer view at ${viewport.name}`);
      } finally {
        await other.context().close();
      }
    },
    90_000,
  );
});
