/**
 * What the web app's browser tests share: the two viewports every page is checked at, and the
 * first-run setup a person does on a new installation.
 */
import type { Page } from "playwright-core";

export const VIEWPORTS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

/** First-run setup in the app at `webUrl`, as a person does it; answers the shown bootstrap token. */
export async function firstRunSetup(page: Page, webUrl: string): Promise<string> {
  await page.goto(webUrl);
  await page.getByRole("button", { name: "First run? Set up this installation", exact: true }).click();
  await page.getByRole("button", { name: "Set up", exact: true }).click();
  const token = (await page.getByTestId("bootstrap-token").textContent()) ?? "";
  await page.getByRole("button", { name: "Continue", exact: true }).click();
  await page.getByRole("heading", { name: "Spaces" }).waitFor();
  return token;
}
