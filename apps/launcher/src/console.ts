/**
 * The launcher's output. A terminal gets readable lines (`12:00:01 api  listening port=8787`);
 * files and pipes get the JSON lines unchanged, one per line, as every service writes them.
 */
const COLOURS = { debug: "\x1b[90m", info: "", warn: "\x1b[33m", error: "\x1b[31m" } as const;
const RESET = "\x1b[0m";
const HIDDEN = new Set(["time", "level", "msg", "service"]);

function value(v: unknown): string {
  if (typeof v === "string") return /\s/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One JSON log record as a terminal line; anything that is not a record passes unchanged. */
export function readableLine(line: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof record !== "object" || record === null || typeof record.msg !== "string") return line;
  const time = typeof record.time === "string" ? record.time.slice(11, 19) : "";
  const level = (typeof record.level === "string" ? record.level : "info") as keyof typeof COLOURS;
  const service = String(record.service ?? "").padEnd(8);
  const fields = Object.entries(record)
    .filter(([k, v]) => !HIDDEN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(" ");
  const mark = level === "warn" || level === "error" ? `${level.toUpperCase()} ` : "";
  const text = `${time} ${service} ${mark}${record.msg}${fields ? `  ${fields}` : ""}`;
  const start = colour ? (COLOURS[level] ?? "") : "";
  return start ? `${start}${text}${RESET}` : text;
}

export interface Console {
  /** A JSON log line from the launcher or a child. */
  log(line: string): void;
  /** Plain text for people (the ready banner, fatal start-up errors); only on a terminal. */
  say(text: string): void;
  readonly tty: boolean;
}

export function createConsole(stream: NodeJS.WriteStream = process.stdout): Console {
  const tty = stream.isTTY === true;
  return {
    tty,
    log: (line) => stream.write(`${tty ? readableLine(line, true) : line}\n`),
    say: (text) => {
      if (tty) stream.write(`${text}\n`);
    },
  };
}
