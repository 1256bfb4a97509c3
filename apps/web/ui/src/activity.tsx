import type { RpcOutput } from "@rakazo/client";
import { useEffect, useRef, useState } from "react";
import { api } from "./api.ts";
import { useT } from "./i18n.ts";

type ActivityEvent = RpcOutput<"computer/activity">["events"][number];

/**
 * Activity (TOOL-4): the computer's `computer.command` history, then live events from the API's
 * stream through the web service (`/api/activity/stream`), redacted as the API gives them.
 * `onEvent` lets the Files window refresh after each bot command (FIL-2).
 */
export function Activity({ computerId, onEvent }: { computerId: string; onEvent?(): void }) {
  const t = useT();
  const [events, setEvents] = useState<ActivityEvent[]>([]);
  const [live, setLive] = useState(false);
  const onEventRef = useRef(onEvent);
  onEventRef.current = onEvent;

  useEffect(() => {
    let alive = true;
    let source: EventSource | undefined;
    const seen = new Set<string>();
    const add = (batch: ActivityEvent[]) => {
      const fresh = batch.filter((e) => !seen.has(e.id));
      for (const e of fresh) seen.add(e.id);
      if (fresh.length > 0) setEvents((old) => [...old, ...fresh].slice(-300));
      return fresh.length;
    };
    (async () => {
      // History first (paged), then the stream; events seen twice are shown once.
      let after: string | undefined;
      for (let page = 0; page < 20 && alive; page++) {
        const result = await api.call("computer/activity", {
          computerId,
          limit: 500,
          ...(after ? { after } : {}),
        });
        add(result.events);
        if (!result.next) break;
        after = result.next;
      }
      if (!alive) return;
      source = new EventSource(`/api/activity/stream?computerId=${computerId}`);
      source.addEventListener("ready", () => setLive(true));
      source.addEventListener("error", () => setLive(false));
      source.addEventListener("computer.command", (message) => {
        if (add([JSON.parse((message as MessageEvent<string>).data) as ActivityEvent]) > 0)
          onEventRef.current?.();
      });
    })().catch(() => setLive(false));
    return () => {
      alive = false;
      source?.close();
    };
  }, [computerId]);

  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls, so keyboard users must be able to reach and scroll it (axe scrollable-region-focusable, WCAG 2.1.1)
    <section className="activity" aria-labelledby="activity-title" tabIndex={0}>
      <h2 id="activity-title">
        {t("activity.title")} {live && <span className="pill live">{t("activity.live")}</span>}
      </h2>
      {events.length === 0 && <p>{t("activity.empty")}</p>}
      <ol className="events" aria-live="polite" data-testid="activity">
        {events.map((event) => (
          <li key={event.id}>
            <time dateTime={event.createdAt}>{new Date(event.createdAt).toLocaleTimeString()}</time>{" "}
            <code className="tool">{String(event.payload.tool ?? event.type)}</code>{" "}
            <code className="line">{String(event.payload.line ?? "")}</code>
            {typeof event.payload.exitCode === "number" && (
              <span className="meta"> {t("activity.exit", { code: event.payload.exitCode })}</span>
            )}
            {typeof event.payload.outputTail === "string" && event.payload.outputTail !== "" && (
              <pre className="tail">{event.payload.outputTail}</pre>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
