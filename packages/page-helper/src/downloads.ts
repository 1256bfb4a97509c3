/**
 * Downloads of a `page.act` call: while it runs, the browser saves downloads (`Browser.setDownloadBehavior`)
 * into `<downloads.dir>/.incoming` under their CDP guid; each completed one is then moved to
 * `<downloads.dir>/<suggested name>` (never overwriting: `name (1).ext`, …) and reported as
 * `<downloads.workspacePath>/<name>` with its size, like the page emulator does. Afterwards the
 * browser's default download behaviour is restored.
 */
import { linkSync, mkdirSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { browserTargetUrl, CdpConnection } from "./cdp.ts";
import { sleep } from "./sleep.ts";

/** A file name safe to create in the downloads folder: one segment, no dot-prefix, no controls. */
export function safeDownloadName(suggested: string): string {
  const base = suggested.split(/[\\/]/).pop() ?? "";
  const printable = Array.from(base)
    .filter((ch) => ch >= " " && ch !== "\u007f")
    .join("");
  const cleaned = printable
    .replace(/^[.\s]+/, "")
    .trim()
    .slice(0, 200);
  return cleaned === "" ? "download" : cleaned;
}

/**
 * Downloads of one `page.act` call, through a browser-level CDP connection (download behaviour
 * and its events are browser-wide and last only as long as the connection that set them).
 */
export class DownloadWatch {
  private readonly cdp: CdpConnection;
  private readonly target: { readonly dir: string; readonly workspacePath: string };
  private readonly incoming: string;
  private readonly begun: { guid: string; name: string; done: Promise<boolean> }[] = [];
  private readonly settle = new Map<string, (ok: boolean) => void>();
  private onBegin: (() => void) | undefined;

  private constructor(cdp: CdpConnection, target: DownloadWatch["target"]) {
    this.cdp = cdp;
    this.target = target;
    this.incoming = path.join(target.dir, ".incoming");
    cdp.on("Browser.downloadWillBegin", (p) => {
      const guid = String(p.guid);
      const done = new Promise<boolean>((resolve) => this.settle.set(guid, resolve));
      this.begun.push({ guid, name: safeDownloadName(String(p.suggestedFilename ?? "")), done });
      this.onBegin?.();
    });
    cdp.on("Browser.downloadProgress", (p) => {
      if (p.state === "completed" || p.state === "canceled")
        this.settle.get(String(p.guid))?.(p.state === "completed");
    });
  }

  static async open(port: number, target: DownloadWatch["target"]): Promise<DownloadWatch> {
    const cdp = await CdpConnection.open(await browserTargetUrl(port));
    const watch = new DownloadWatch(cdp, target);
    try {
      mkdirSync(watch.incoming, { recursive: true });
      await cdp.send("Browser.setDownloadBehavior", {
        behavior: "allowAndName",
        downloadPath: watch.incoming,
        eventsEnabled: true,
      });
    } catch (error) {
      cdp.close();
      throw error;
    }
    return watch;
  }

  /**
   * Waits (bounded) for the downloads that began, moves the completed ones into place.
   * `beginGraceMs`: how long to wait for a first download to be announced when none has been.
   */
  async finish(timeoutMs: number, beginGraceMs: number): Promise<{ path: string; size: number }[]> {
    if (this.begun.length === 0 && beginGraceMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, beginGraceMs);
        this.onBegin = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.onBegin = undefined;
    }
    const deadline = Date.now() + timeoutMs;
    const saved: { path: string; size: number }[] = [];
    for (const download of this.begun) {
      const left = Math.max(deadline - Date.now(), 0);
      const ok = await Promise.race([download.done, sleep(left).then(() => false)]);
      if (!ok) continue;
      const name = this.place(path.join(this.incoming, download.guid), download.name);
      saved.push({
        path: `${this.target.workspacePath}/${name}`,
        size: statSync(path.join(this.target.dir, name)).size,
      });
    }
    return saved;
  }

  /** Moves a finished file to `<dir>/<name>`, or `name (n).ext` when taken; never overwrites. */
  private place(from: string, name: string): string {
    const ext = path.extname(name);
    const stem = name.slice(0, name.length - ext.length);
    for (let n = 0; ; n += 1) {
      const candidate = n === 0 ? name : `${stem} (${n})${ext}`;
      try {
        linkSync(from, path.join(this.target.dir, candidate));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST" && n < 1000) continue;
        throw error;
      }
      unlinkSync(from);
      return candidate;
    }
  }

  async close(): Promise<void> {
    await this.cdp.send("Browser.setDownloadBehavior", { behavior: "default" }, 2_000).catch(() => undefined);
    this.cdp.close();
  }
}
