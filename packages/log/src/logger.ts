/**
 * The project's logger: pino underneath (levels, child bindings, one JSON object per line), with
 * the project's redaction as its formatter, so every field, binding and message passes through
 * `redactValue`/`redactText` before it is serialised. Errors keep their stack and cause.
 */
import pino from "pino";
import { redactText, redactValue } from "./redact.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  readonly level?: LogLevel;
  /** Where JSON lines go (without the newline); stdout by default. Tests capture lines here. */
  readonly write?: (line: string) => void;
  readonly base?: Record<string, unknown>;
}

type LineListener = (line: string) => void;
const lineListeners = new Set<LineListener>();

/**
 * Sees every line any logger of this process writes, after redaction. For test harnesses that
 * check no secret reaches a log line; returns the function that stops listening.
 */
export function onLogLine(listener: LineListener): () => void {
  lineListeners.add(listener);
  return () => lineListeners.delete(listener);
}

function wrap(instance: pino.Logger): Logger {
  // Fields are redacted by the `log` formatter; the message is a plain string and is redacted here.
  const at =
    (level: LogLevel) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      instance[level](fields ?? {}, redactText(msg));
    };
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    // pino's bindings formatter sees only the root's base, so child bindings are redacted here.
    child: (fields) => wrap(instance.child(redactValue(fields) as Record<string, unknown>)),
  };
}

/** One JSON object per line; every field passes through redaction first. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const destination = {
    write(chunk: string) {
      const line = chunk.endsWith("\n") ? chunk.slice(0, -1) : chunk;
      write(line);
      for (const listener of lineListeners) listener(line);
    },
  };
  const instance = pino(
    {
      level: options.level ?? "info",
      base: null,
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redactValue(object) as Record<string, unknown>,
      },
      // Redaction already turned errors into plain objects (with stack and cause); pino's own
      // error serializer must not see them again.
      serializers: { err: (value: unknown) => value },
    },
    destination,
  );
  const root = wrap(instance);
  return options.base ? root.child(options.base) : root;
}

export const silentLogger: Logger = createLogger({ write: () => {} });
