import { type FormEvent, useEffect, useState } from "react";
import { api, errorMessage } from "./api.ts";
import { useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";
import { RunHistory } from "./run-history.tsx";
import { Transcript } from "./transcript.tsx";
import "./bot-work.css";

const ACTIVE = new Set(["queued", "running", "waiting_takeover", "waiting_approval"]);

/**
 * A bot at work in the computer view: the task box (`agent/run`; without a model it says which
 * variables to set instead of a Start that would fail), Stop for the running run, the bot's
 * takeover request with its reason, Take control and Hand back (TKO-3: the same run continues),
 * the open run's live transcript and the bot's run history. Control itself stays the computer
 * view's (`inControl`, `takeControl`, `handBack`).
 */
export function BotWork({
  computerId,
  bot,
  inControl,
  takeControl,
  handBack,
}: {
  computerId: string;
  bot: { id: string; name: string };
  inControl: boolean;
  takeControl(): Promise<boolean>;
  handBack(): Promise<void>;
}) {
  const t = useT();
  const status = usePoll(() => api.call("agent/status", {}), 60_000, []);
  const [fast, setFast] = useState(false);
  const runs = usePoll(() => api.call("run/list", { computerId, botId: bot.id }), fast ? 1_000 : 5_000, [
    computerId,
    bot.id,
  ]);
  const latest = runs.data?.[0];
  const active = latest && ACTIVE.has(latest.status) ? latest : undefined;
  useEffect(() => setFast(active !== undefined), [active]);
  // The run whose transcript is open: the one picked in the history (for this bot), else the latest.
  const [picked, setPicked] = useState<{ botId: string; runId: string }>();
  const openRunId = (picked?.botId === bot.id ? picked.runId : undefined) ?? latest?.id;
  const open = (runId: string) => setPicked({ botId: bot.id, runId });
  const [task, setTask] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  async function perform(action: () => Promise<unknown>) {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    } finally {
      setBusy(false);
      runs.refresh();
    }
  }

  async function start(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    await perform(async () => {
      const run = await api.call("agent/run", { computerId, botId: bot.id, task: task.trim() });
      setTask("");
      open(run.id);
    });
  }

  const configured = status.data?.configured;
  return (
    <section className="bot-work card" aria-labelledby="bot-work-title">
      <h2 id="bot-work-title">{t("work.title", { bot: bot.name })}</h2>
      {active?.status === "waiting_takeover" && (
        <div className="callout" role="alert" data-testid="takeover-notice">
          <p>
            <strong>{t("work.asks", { bot: bot.name })}</strong>
          </p>
          {active.takeoverReason && <p>{t("work.asksReason", { reason: active.takeoverReason })}</p>}
          {inControl ? (
            <>
              <p>{t("work.handBackHelp")}</p>
              <button
                type="button"
                className="primary"
                disabled={busy}
                onClick={() => void perform(handBack)}
              >
                {t("work.handBack", { bot: bot.name })}
              </button>
            </>
          ) : (
            <button
              type="button"
              className="primary"
              disabled={busy}
              onClick={() => void perform(takeControl)}
            >
              {t("work.takeControl")}
            </button>
          )}
        </div>
      )}
      {configured === false && (
        <div className="callout" role="status" data-testid="no-model">
          <p>{t("work.noModel")}</p>
          <p>{t("work.noModelHow")}</p>
          {status.data?.problem && (
            <p>
              <code>{status.data.problem}</code>
            </p>
          )}
        </div>
      )}
      {active ? (
        <p className="controls" role="status">
          <span>{t("work.working", { bot: bot.name })}</span>{" "}
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() => void perform(() => api.call("computer/stopBot", { computerId, botId: bot.id }))}
          >
            {t("work.stop")}
          </button>
        </p>
      ) : (
        configured && (
          <form className="task-box" onSubmit={start}>
            <label htmlFor="bot-task">{t("work.task", { bot: bot.name })}</label>
            <textarea
              id="bot-task"
              rows={3}
              maxLength={20_000}
              value={task}
              aria-describedby="bot-task-help"
              onChange={(e) => setTask(e.target.value)}
            />
            <p id="bot-task-help" className="meta">
              {t("work.taskHelp")}
            </p>
            <button type="submit" className="primary" disabled={busy || task.trim() === ""}>
              {busy ? t("work.starting") : t("work.start")}
            </button>
          </form>
        )
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {openRunId && (
        // The history reads the runs again when the transcript sees the run move on, so it never
        // shows a run still working that the transcript above it shows finished.
        <Transcript
          key={openRunId}
          computerId={computerId}
          runId={openRunId}
          bot={bot.name}
          onStatus={runs.refresh}
        />
      )}
      <RunHistory runs={runs.data ?? []} bot={bot.name} openRunId={openRunId} onOpen={open} />
    </section>
  );
}

/** The space's runs that ask for a person, for the space's computer list (TKO-3). */
export function WaitingRuns({
  spaceId,
  computers,
  bots,
}: {
  spaceId: string;
  computers: readonly { id: string; name: string }[];
  bots: readonly { id: string; name: string }[];
}) {
  const t = useT();
  const waiting = usePoll(() => api.call("run/waiting", { spaceId }), 3_000, [spaceId]);
  if (!waiting.data || waiting.data.length === 0) return null;
  return (
    <div className="waiting-runs" role="alert" data-testid="waiting-runs">
      <ul>
        {waiting.data.map((run) => {
          const computer = computers.find((c) => c.id === run.computerId)?.name ?? run.computerId;
          const bot = bots.find((b) => b.id === run.botId)?.name ?? run.botId;
          return (
            <li key={run.runId} className="callout">
              <a href={`#/computers/${run.computerId}?bot=${run.botId}`}>
                {t("work.waitingList", { bot, computer, reason: run.reason ?? "" })}
              </a>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
