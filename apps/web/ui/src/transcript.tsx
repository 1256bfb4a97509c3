import { useEffect, useRef, useState } from "react";
import { api } from "./api.ts";
import { type MessageKey, useT } from "./i18n.ts";
import { FailedIcon } from "./icons.tsx";

interface RunEvent {
  readonly id: string;
  readonly runId: string;
  readonly seq: number;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly thumbnail: string | null;
  readonly createdAt: string;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** A tool call's arguments in one short line (the full ones are under "Arguments"). */
function brief(args: unknown): string {
  if (!args || typeof args !== "object") return "";
  const values = Object.values(args as Record<string, unknown>).map((v) =>
    typeof v === "string" ? v : JSON.stringify(v),
  );
  const line = values.join(" ");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * One run's transcript: its stored events (`run/transcript`, paged), then live ones from the
 * activity stream (`run.event`). Events arrive numbered; a gap (the stream dropped some for a
 * slow reader, or it reconnected) is filled by reading the transcript again from the last seen.
 */
export function Transcript({
  computerId,
  runId,
  bot,
  onStatus,
}: {
  computerId: string;
  runId: string;
  bot: string;
  /** A status event arrived live (the run moved on): lists of runs read it again at once. */
  onStatus?(): void;
}) {
  const t = useT();
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [live, setLive] = useState(false);
  const statusSeen = useRef(onStatus);
  statusSeen.current = onStatus;

  useEffect(() => {
    let alive = true;
    let last = 0;
    let reading: Promise<void> | undefined;
    // An event that arrived while a read was under way: read once more after it.
    let again = false;
    setEvents([]);
    const read = (): Promise<void> => {
      if (reading) {
        again = true;
        return reading;
      }
      reading = (async () => {
        do {
          again = false;
          for (let page = 0; page < 50 && alive; page++) {
            const result = await api.call("run/transcript", { runId, afterSeq: last });
            const fresh = result.events.filter((e) => e.seq > last);
            if (fresh.length > 0) {
              last = fresh.at(-1)?.seq ?? last;
              if (alive) setEvents((old) => [...old, ...fresh]);
            }
            if (!result.more) break;
          }
        } while (again && alive);
      })().finally(() => {
        reading = undefined;
      });
      return reading;
    };
    const source = new EventSource(`/api/activity/stream?computerId=${computerId}`);
    source.addEventListener("ready", () => {
      setLive(true);
      void read();
    });
    source.addEventListener("error", () => setLive(false));
    source.addEventListener("run.event", (message) => {
      const event = JSON.parse((message as MessageEvent<string>).data) as RunEvent;
      if (event.runId !== runId || event.seq <= last) return;
      if (event.type === "status") statusSeen.current?.();
      if (event.seq === last + 1 && !reading) {
        last = event.seq;
        setEvents((old) => [...old, event]);
      } else void read();
    });
    void read();
    return () => {
      alive = false;
      source.close();
    };
  }, [computerId, runId]);

  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the transcript scrolls, so keyboard users must be able to reach and scroll it (axe scrollable-region-focusable)
    <section className="transcript" aria-labelledby="transcript-title" tabIndex={0}>
      <h3 id="transcript-title">
        {t("transcript.title")} {live && <span className="pill live">{t("transcript.live")}</span>}
      </h3>
      {events.length === 0 && <p>{t("transcript.empty")}</p>}
      <ol className="events" aria-live="polite" data-testid="transcript">
        {events.map((event) => (
          <li
            key={event.id}
            data-type={event.type}
            className={event.payload.ok === false ? "failed" : undefined}
          >
            <EventBody event={event} bot={bot} />
          </li>
        ))}
      </ol>
    </section>
  );
}

function EventBody({ event, bot }: { event: RunEvent; bot: string }) {
  const t = useT();
  const p = event.payload;
  const time = <time dateTime={event.createdAt}>{new Date(event.createdAt).toLocaleTimeString()}</time>;
  if (event.type === "text") {
    return (
      <>
        <div className="event-head">
          {time} <span className="meta">{t("transcript.said", { bot })}</span>
        </div>
        <p className="said">{text(p.text)}</p>
      </>
    );
  }
  if (event.type === "error") {
    return (
      <div className="event-head">
        {time}{" "}
        <span className="outcome failed">
          <FailedIcon /> {t("transcript.error", { message: text(p.message) })}
        </span>
      </div>
    );
  }
  if (event.type === "status") {
    const key = `transcript.status.${text(p.status)}` as MessageKey;
    return (
      <div className="event-head status-line" data-status={text(p.status)}>
        {time} <strong>{t(key, { task: text(p.task), error: text(p.error) })}</strong>
      </div>
    );
  }
  const failed = p.ok === false;
  const args = JSON.stringify(p.args ?? {}, null, 1);
  return (
    <>
      <div className="event-head" data-testid="transcript-tool">
        {time} <code>{text(p.tool)}</code> <span className="brief">{brief(p.args)}</span>{" "}
        {failed && (
          <span className="outcome failed">
            <FailedIcon /> {t("transcript.failed")}
          </span>
        )}{" "}
        {typeof p.durationMs === "number" && (
          <span className="meta">{t("transcript.took", { ms: p.durationMs })}</span>
        )}
      </div>
      {args !== "{}" && (
        <details>
          <summary>{t("transcript.arguments")}</summary>
          <pre className="tail">{args}</pre>
        </details>
      )}
      {text(p.result) !== "" && (
        <details open={failed}>
          <summary>{t("transcript.result")}</summary>
          <pre className={failed ? "tail stderr" : "tail"}>{text(p.result)}</pre>
        </details>
      )}
      {event.thumbnail && (
        <img className="thumbnail" src={event.thumbnail} alt={t("transcript.thumbnail", { bot })} />
      )}
    </>
  );
}
