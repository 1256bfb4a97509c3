import type { RpcOutput } from "@rakazo/client";
import { useContext, useEffect, useRef, useState } from "react";
import { api } from "./api.ts";
import { LocaleContext, type MessageKey, useT } from "./i18n.ts";
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

type Actor = "bot" | "person" | "api";

/** Who acted: a bot's own tool call, or a call through the API by a person in the app or a script. */
function actorOf(event: ActivityEvent): Actor {
  const details = event.payload.details as { via?: unknown; by?: unknown } | undefined;
  if (details?.via !== "api") return "bot";
  return details.by === "person" ? "person" : "api";
}

/** Tools whose call reads as a plain sentence; the rest show their tool and line. */
const PLAIN = new Set([
  "computer/takeControl",
  "computer/releaseControl",
  "computer/stopBot",
  "computer/terminalUrl",
  "computer/screenUrl",
  "computer/revokeScreenUrl",
  "computer/setNetwork",
  "computer/files/upload",
  "computer/files/write",
  "computer/act",
  "write_file",
  "browser_navigate",
  "browser_act",
  "computer_act",
]);
/** A line's words that only repeat the tool ("take_control", "network →"), left out after the sentence. */
const REPEATED =
  /^(take_control|release_control|stop_bot|terminal_url|revoke_screen_url|screen_url \w+|network →|upload|write|computer_act|write_file|browser_\w+)\s*/;

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
  if (PLAIN.has(tool)) {
    const rest = line?.replace(REPEATED, "").trim();
    return (
      <span className="summary">
        {t(`activity.do.${tool}` as MessageKey)}
        {rest ? (
          <>
            {" "}
            <code className="line">{rest}</code>
          </>
        ) : null}
      </span>
    );
  }
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
 * shown newest first, grouped by who acted (a bot, a person in the app, a script through the
 * API), in plain words and the app's locale (times by Intl), failures marked in words and an icon
 * (not colour alone), errors (stderr) apart from the output.
 * `onEvent` lets the Files window refresh after each bot command (FIL-2).
 */
export function Activity({
  computerId,
  onEvent,
  bots,
}: {
  computerId: string;
  onEvent?(): void;
  /** The space's bots, to name the one that acted. */
  bots?: readonly { id: string; name: string }[] | undefined;
}) {
  const t = useT();
  const { locale } = useContext(LocaleContext);
  const time = new Intl.DateTimeFormat(locale, { timeStyle: "medium" });
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "medium" });
  const today = new Date().toDateString();
  const actorLabel = (event: ActivityEvent) => {
    const actor = actorOf(event);
    if (actor !== "bot") return t(`activity.actor.${actor}`);
    const name = bots?.find((b) => b.id === event.botId)?.name;
    return name ? t("activity.actor.bot", { name }) : t("activity.actor.botUnknown");
  };
  const [events, setEvents] = useState<ActivityEvent[]>([]);
  const [live, setLive] = useState(false);
  // Until the history is read, "No commands yet." would be untrue: "Loading…" instead.
  const [loaded, setLoaded] = useState(false);
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
      setLoaded(true);
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
      {shown.length === 0 && <p>{t(loaded ? "activity.empty" : "app.loading")}</p>}
      <ol className="events" aria-live="polite" data-testid="activity">
        {shown.map((event, index) => {
          // Grouped by who acted: a new group starts where the actor (or the bot) changes.
          const previous = shown[index - 1];
          const actor = actorOf(event);
          const startsGroup =
            !previous || actorOf(previous) !== actor || (actor === "bot" && previous.botId !== event.botId);
          const at = new Date(event.createdAt);
          const failed = event.payload.ok === false;
          const error = text(event.payload.error);
          const output = text(event.payload.outputTail);
          const stderr = text(event.payload.stderrTail);
          return (
            <li
              key={event.id}
              data-ok={failed ? "false" : "true"}
              data-actor={actor}
              className={failed ? "failed" : undefined}
            >
              {startsGroup && (
                <p className="actor" data-testid="activity-actor">
                  {actorLabel(event)}
                </p>
              )}
              <div className="event-head">
                <time dateTime={event.createdAt}>
                  {(at.toDateString() === today ? time : dateTime).format(at)}
                </time>{" "}
                {failed && (
                  <span className="outcome failed">
                    <FailedIcon /> {t("activity.failed")}
                  </span>
                )}{" "}
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
