import type { RpcOutput } from "@rakazo/client";
import { type MessageKey, useT } from "./i18n.ts";

export type RunEntry = RpcOutput<"run/list">[number];

/** Seconds from start to end (to now while it runs). */
function seconds(run: RunEntry): number {
  const start = Date.parse(run.startedAt ?? run.createdAt);
  const end = run.finishedAt ? Date.parse(run.finishedAt) : Date.now();
  return Math.max(0, Math.round((end - start) / 1000));
}

/** A bot's runs on this computer, newest first; opening one shows its transcript. */
export function RunHistory({
  runs,
  bot,
  openRunId,
  onOpen,
}: {
  runs: readonly RunEntry[];
  bot: string;
  openRunId: string | undefined;
  onOpen(runId: string): void;
}) {
  const t = useT();
  return (
    <section className="run-history" aria-labelledby="run-history-title">
      <h3 id="run-history-title">{t("history.title", { bot })}</h3>
      {runs.length === 0 && <p>{t("history.empty")}</p>}
      <ol className="runs" data-testid="run-history">
        {runs.map((run) => (
          <li key={run.id} data-status={run.status} aria-current={run.id === openRunId ? "true" : undefined}>
            <button type="button" className="link" onClick={() => onOpen(run.id)}>
              <time dateTime={run.createdAt}>{new Date(run.createdAt).toLocaleString()}</time>
            </button>{" "}
            <span className={`badge run-${run.status}`}>
              {t(`history.status.${run.status}` as MessageKey)}
            </span>{" "}
            <span className="meta">
              {t("history.duration", { seconds: seconds(run) })} ·{" "}
              {t("history.toolCalls", { count: run.toolCalls })}
            </span>
            {run.task && <p className="task">{run.task}</p>}
            {run.error && <p className="event-error">{run.error}</p>}
          </li>
        ))}
      </ol>
    </section>
  );
}
