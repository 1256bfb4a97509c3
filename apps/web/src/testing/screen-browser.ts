/**
 * A screen in real Chromium, as the screen tests open it: the embed page of a screen URL, its
 * noVNC frame, the desktop's pixels read off the canvas, and keys typed into the viewer —
 * optionally by a viewer that turns its own view-only off (the gateway must still drop them).
 * Shared by the Docker, host-daemon and Boat screen tests.
 */
import type { Browser, Frame, Page } from "playwright-core";

export interface OpenScreen {
  readonly page: Page;
  readonly frame: Frame;
}

/**
 * Opens `<web>/embed/<cap>/` for a `<web>/screens/<cap>/` URL; resolves once noVNC connected.
 * `onPage` sees the page before it navigates (to record what it loads).
 */
export async function openScreen(
  browser: Browser,
  screenUrl: string,
  options: { timeoutMs?: number; onPage?: (page: Page) => void } = {},
): Promise<OpenScreen> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  options.onPage?.(page);
  await page.goto(screenUrl.replace("/screens/", "/embed/"));
  await page.waitForSelector("html.screen-connected", { timeout: options.timeoutMs ?? 30_000 });
  const frame = page.frames().find((f) => f.url().includes("/screens/"));
  if (!frame) throw new Error("no screen frame");
  return { page, frame };
}

/**
 * The RGBA of the canvas pixel at the middle, 80 % down, once it is the green of `GREEN_PAGE`
 * (screen-system.ts); times out otherwise.
 */
export async function greenPixel(frame: Frame, timeoutMs = 20_000): Promise<number[]> {
  const pixel = await frame.waitForFunction(
    () => {
      const canvas = (globalThis as any).document.querySelector("canvas") as any;
      if (!canvas || canvas.width < 100) return undefined;
      const d = canvas
        .getContext("2d")
        ?.getImageData(canvas.width / 2, Math.floor(canvas.height * 0.8), 1, 1).data;
      return d && d[1] > 150 && d[0] < 60 ? Array.from(d) : undefined;
    },
    undefined,
    { timeout: timeoutMs },
  );
  return (await pixel.jsonValue()) as number[];
}

/**
 * Types `text` into the viewer and waits a second for it to reach the desktop. `cheat` turns
 * the viewer's own view-only off first: a hostile viewer, whose input only the gateway can drop.
 */
export async function typeIntoScreen(screen: OpenScreen, text: string, cheat = false): Promise<void> {
  await screen.frame.evaluate((off) => {
    const rfb = (globalThis as any).__rakazoRfb;
    if (off) rfb.viewOnly = false;
    rfb.focus();
  }, cheat);
  await screen.page.keyboard.type(text, { delay: 30 });
  await new Promise((r) => setTimeout(r, 1000));
}
