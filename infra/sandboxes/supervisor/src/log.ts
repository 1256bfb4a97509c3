/**
 * The supervisor's one event log: every line it writes is one JSON object,
 * `{"time":"<ISO>","event":"<area.what>",…}`, on stderr. The command path's detached daemon
 * appends stderr to `<runDir>/supervisor.log`; `docker logs` shows the container main process's.
 * Events carry ids, counts and codes only: tickets, keys and tokens are never logged.
 */

/** One event: `event` names it (`daemon.listening`, `gateway.connection.closed`, …). */
type LogEvent = { readonly event: string } & Readonly<Record<string, unknown>>;
export type Log = (event: LogEvent) => void;

/** The daemon's log: one JSON line per event, stamped with the time. */
export function jsonLinesLog(write: (line: string) => void = (line) => process.stderr.write(line)): Log {
  return (event) => write(`${JSON.stringify({ time: new Date().toISOString(), ...event })}\n`);
}

/** A log that drops everything (components built without one, e.g. in unit tests). */
export const silentLog: Log = () => {};

/** An error's message for an event (never its stack: a log line stays one line). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
