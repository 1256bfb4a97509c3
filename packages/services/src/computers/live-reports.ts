/**
 * What `computer/get` reads from a live machine — its desktop report (the supervisor's health)
 * and its home's disk — kept for `LIVE_REPORT_TTL_MS` per computer and shared by every caller
 * in that time, so a page of people polling one computer costs one supervisor call a second,
 * not one per request. What must stay true:
 * - Freshness: a report is served at most `LIVE_REPORT_TTL_MS` after it arrived (plus the time
 *   the read itself took, at most its own timeout); this process's own desktop actions on the
 *   computer (observe, act) drop its report at once, so their effect shows on the next read.
 * - No leak across computers or machines: an entry belongs to one computer id and is used only
 *   while the row still names the same machine — provider kind, provider ref and the row's
 *   `updatedAt`, which every start, stop, replacement and use of the computer moves. Anything
 *   else reads again.
 * - Concurrent readers of an expired or missing entry share one read (single flight); a read
 *   that answered null (the callers' timeout or refusal) is kept like any answer, so a computer
 *   that does not answer is asked once per TTL, not by every request; a read that threw is not kept.
 */
export const LIVE_REPORT_TTL_MS = 1_000;

/** Entries beyond this many computers are dropped wholesale (a process serves far fewer). */
const MAX_COMPUTERS = 10_000;

type LiveReportPart = "desktops" | "disk";

interface Entry {
  /** Which machine the report describes (see the header); a different one is a miss. */
  readonly machine: string;
  readonly value: Promise<unknown>;
  /** When the read resolved (ms, `Date.now`); undefined while it is still in flight. */
  settledAt: number | undefined;
}

export interface LiveReports {
  /** The part's report for this computer and machine: kept, or read now by `read` (once). */
  get<T>(part: LiveReportPart, computerId: string, machine: string, read: () => Promise<T>): Promise<T>;
  /** Whether a report of this machine is kept or being read (fresh or not): false on its first read. */
  knows(part: LiveReportPart, computerId: string, machine: string): boolean;
  /** Drops what is kept for a computer (this process changed its desktops). */
  forget(computerId: string): void;
}

export function createLiveReports(ttlMs = LIVE_REPORT_TTL_MS, now: () => number = Date.now): LiveReports {
  const entries = new Map<string, Entry>();
  const keyOf = (part: LiveReportPart, computerId: string) => `${part}\0${computerId}`;
  return {
    get<T>(part: LiveReportPart, computerId: string, machine: string, read: () => Promise<T>): Promise<T> {
      const key = keyOf(part, computerId);
      const kept = entries.get(key);
      if (
        kept &&
        kept.machine === machine &&
        (kept.settledAt === undefined || now() - kept.settledAt < ttlMs)
      ) {
        return kept.value as Promise<T>;
      }
      if (entries.size >= MAX_COMPUTERS) entries.clear();
      const entry: Entry = { machine, value: read(), settledAt: undefined };
      entries.set(key, entry);
      entry.value.then(
        () => {
          entry.settledAt = now();
        },
        // A read that threw is not kept: the next caller reads again.
        () => {
          if (entries.get(key) === entry) entries.delete(key);
        },
      );
      return entry.value as Promise<T>;
    },
    knows(part, computerId, machine) {
      return entries.get(keyOf(part, computerId))?.machine === machine;
    },
    forget(computerId) {
      entries.delete(keyOf("desktops", computerId));
    },
  };
}
