import type { RpcOutput } from "@rakazo/client";
import { useEffect, useRef, useState } from "react";
import { api } from "./api.ts";
import { useT } from "./i18n.ts";
import { FailedIcon } from "./icons.tsx";

type ActivityEvent = RpcOutput<"computer/activity">["events"][number];

/**
 * A person watching a screen (`computer/screenUrl` with policy "view") is recorded, but is no
 * action on the computer: the feed leaves it out.
 */
function isPageView(event: ActivityEvent): boolean {
  const details = event.payload.details as { policy?: unknown } | undefined;
  return event.payload.tool === "computer/screenUrl" && details?.policy === "view";
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** One event in plain words: "ran `ls` — exit 0", else the tool and its line. */
function Summary({ event }: { event: ActivityEvent }) {
  const t = useT();
  const { payload } = event;
  const command = text(payload.command);
  const exitCode = typeof payload.exitCode === "number" ? payload.exitCode : undefined;
  if (command !== undefined) {
    return (
      <span className="summary">
        {t("activity.ran")} <code className="line">{command}</code>
        {exitCode !== undefined && ` — ${t("activity.exit", { code: exitCode })}`}
        {/\(timed out\)$/.test(String(payload.line ?? "")) && ` (${t("activity.timedOut")})`}
      </span>
    );
  }
  const tool = String(payload.tool ?? event.type);
  const line = text(payload.line);
  return (
    <span className="summary">
      <code className="tool">{tool}</code>
      {line !== undefined && line !== tool && (
        <>
          {" "}
          <code className="line">{line.startsWith(`${tool} `) ? line.slice(tool.length + 1) : line}</code>
        </>
      )}
    </span>
  );
}

/**
 * Activity (TOOL-4): the computer's `computer.command` history, then live events from the API's
 * stream through the web service (`/api/activity/stream`), redacted as the API gives them;
 * shown newest first, in plain words, failures marked in words and an icon (not colour alone),
 * errors (stderr) apart from the output.
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

  // Newest at the top, by when it happened (two calls recorded at once may arrive in either
  // order); a person's page views are not actions.
  const shown = events
    .filter((event) => !isPageView(event))
    .reverse()
    .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls, so keyboard users must be able to reach and scroll it (axe scrollable-region-focusable, WCAG 2.1.1)
    <section className="activity" aria-labelledby="activity-title" tabIndex={0}>
      <h2 id="activity-title">
        {t("activity.title")} {live && <span className="pill live">{t("activity.live")}</span>}
      </h2>
      {shown.length === 0 && <p>{t("activity.empty")}</p>}
      <ol className="events" aria-live="polite" data-testid="activity">
        {shown.map((event) => {
          const failed = event.payload.ok === false;
          const error = text(event.payload.error);
          const output = text(event.payload.outputTail);
          const stderr = text(event.payload.stderrTail);
          const by = event.payload.details as { via?: unknown } | undefined;
          return (
            <li key={event.id} data-ok={failed ? "false" : "true"} className={failed ? "failed" : undefined}>
              <div className="event-head">
                <time dateTime={event.createdAt}>{new Date(event.createdAt).toLocaleTimeString()}</time>{" "}
                {failed && (
                  <span className="outcome failed">
                    <FailedIcon /> {t("activity.failed")}
                  </span>
                )}{" "}
                <span className="meta">{t(by?.via === "api" ? "activity.byApi" : "activity.byBot")}</span>{" "}
                <Summary event={event} />
              </div>
              {error !== undefined && <p className="event-error">{error}</p>}
              {output !== undefined && (
                <>
                  <p className="tail-label">
                    {t(stderr === undefined ? "activity.output" : "activity.stdout")}
                  </p>
                  <pre className="tail">{output}</pre>
                </>
              )}
              {stderr !== undefined && (
                <>
                  <p className="tail-label">{t("activity.stderr")}</p>
                  <pre className="tail stderr">{stderr}</pre>
                </>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
