/**
 * Calls for one bot run one at a time, in arrival order (DesktopSlots' first invariant); calls
 * for different bots run side by side. A failed call does not stop the ones queued after it,
 * and a bot with nothing queued holds no entry.
 */
export class BotQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(botId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(botId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.#tails.set(botId, settled);
    void settled.then(() => {
      if (this.#tails.get(botId) === settled) this.#tails.delete(botId);
    });
    return next;
  }
}
