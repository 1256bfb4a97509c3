/**
 * What the desktop tools remember between calls, per session:
 * - TOOL-2: the hash of the last screenshot the model was shown, so an identical frame is sent
 *   as metadata only ("the previous screenshot remains valid").
 * - TOOL-3: how many times in a row the same visual action batch left the frame unchanged; from
 *   the third identical attempt on an unchanged frame, `computer_act` refuses.
 */
import type { DesktopAction } from "@rakazo/sandbox";

/** Identical batches that may leave the frame unchanged before the next copy is refused. */
export const MAX_FUTILE_REPEATS = 2;

const VISUAL: ReadonlySet<DesktopAction["type"]> = new Set([
  "click",
  "drag",
  "scroll",
  "type",
  "key",
  "move",
]);

export class FrameMemory {
  /** Hash of the last frame whose image the model received. */
  shownHash: string | undefined;
  /** Hash of the most recent frame seen by any tool. */
  currentHash: string | undefined;
  private futile: { key: string; count: number; hash: string } | undefined;

  /** True when the image must be sent; false when the model already has this exact frame. */
  shouldSendImage(frameHash: string): boolean {
    this.currentHash = frameHash;
    if (this.shownHash === frameHash) return false;
    this.shownHash = frameHash;
    return true;
  }

  /** The refusal message when this batch already failed to change this frame twice, else undefined. */
  refusal(actions: readonly DesktopAction[]): string | undefined {
    const key = visualKey(actions);
    if (!key || !this.futile || this.futile.key !== key) return undefined;
    if (this.futile.count < MAX_FUTILE_REPEATS || this.futile.hash !== this.currentHash) return undefined;
    return (
      `Refused: the same ${describe(actions)} already ran ${this.futile.count} times without changing the screen. ` +
      "Repeating it will not help. Use browser_snapshot and browser_act to work with the page's text and " +
      "element refs, try a different action, or call request_takeover if a person must step in."
    );
  }

  /** Records a finished batch: the frame before and after it. */
  recordAct(actions: readonly DesktopAction[], before: string | undefined, after: string): void {
    this.currentHash = after;
    const key = visualKey(actions);
    if (!key || before === undefined || before !== after) {
      this.futile = undefined;
      return;
    }
    this.futile =
      this.futile && this.futile.key === key && this.futile.hash === after
        ? { key, count: this.futile.count + 1, hash: after }
        : { key, count: 1, hash: after };
  }
}

function visualKey(actions: readonly DesktopAction[]): string | undefined {
  const visual = actions.filter((a) => VISUAL.has(a.type));
  return visual.length ? JSON.stringify(visual) : undefined;
}

function describe(actions: readonly DesktopAction[]): string {
  const types = [...new Set(actions.filter((a) => VISUAL.has(a.type)).map((a) => a.type))];
  return `${types.join("/")} action${actions.length > 1 ? "s" : ""}`;
}
