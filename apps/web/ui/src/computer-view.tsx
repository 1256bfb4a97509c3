import { useState } from "react";
import { Activity } from "./activity.tsx";
import { api, errorMessage, RakazoApiError } from "./api.ts";
import { Files } from "./files.tsx";
import { type MessageKey, useT } from "./i18n.ts";
import { OperationsPill } from "./operations.tsx";
import { usePoll } from "./poll.ts";
import { Screen, type ScreenStatus } from "./screen.tsx";
import { Shell } from "./shell.tsx";

type Tab = "screen" | "shell" | "files";

/**
 * The computer view: a bot's screen (view by default), "Take control"/release (TKO-1) with the 409
 * "Stop the bot first" explained and a Stop button (TKO-2), the dock (TRM-1…3, FIL-2), Activity
 * and the computer's operations (OPS-2).
 */
export function ComputerView({ computerId, botId }: { computerId: string; botId: string | undefined }) {
  const t = useT();
  const computer = usePoll(() => api.call("computer/get", { computerId }), 3_000, [computerId]);
  const spaceId = computer.data?.spaceId;
  const bots = usePoll(async () => (spaceId ? api.call("bot/list", { spaceId }) : undefined), 15_000, [
    spaceId,
  ]);
  const bot = bots.data?.find((b) => b.id === botId) ?? bots.data?.[0];
  const [control, setControl] = useState(false);
  const [busy, setBusy] = useState(false);
  const [stopFirst, setStopFirst] = useState(false);
  const [error, setError] = useState<string>();
  const [tab, setTab] = useState<Tab>("screen");
  const [opened, setOpened] = useState<Set<Tab>>(new Set(["screen"]));
  const [commandTick, setCommandTick] = useState(0);
  const [screenStatus, setScreenStatus] = useState<ScreenStatus>("loading");

  const show = (next: Tab) => {
    setTab(next);
    setOpened((old) => new Set(old).add(next));
  };

  async function takeControl(): Promise<boolean> {
    if (!bot) return false;
    setBusy(true);
    setError(undefined);
    try {
      await api.call("computer/takeControl", { computerId, botId: bot.id });
      setStopFirst(false);
      setControl(true);
      return true;
    } catch (e) {
      if (e instanceof RakazoApiError && e.code === "TAKEOVER_CONFLICT") setStopFirst(true);
      else setError(t("app.error", { message: errorMessage(e) }));
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function release() {
    if (!bot) return;
    setBusy(true);
    try {
      await api.call("computer/releaseControl", { computerId, botId: bot.id });
    } catch (e) {
      if (!(e instanceof RakazoApiError && e.code === "NOT_IN_CONTROL"))
        setError(t("app.error", { message: errorMessage(e) }));
    } finally {
      setControl(false);
      setBusy(false);
      if (tab === "shell") show("screen");
    }
  }

  async function stopBotAndTakeOver() {
    if (!bot) return;
    setBusy(true);
    try {
      await api.call("computer/stopBot", { computerId, botId: bot.id });
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
      setBusy(false);
      return;
    }
    setBusy(false);
    await takeControl();
  }

  // TRM-2: without control, "Open shell" takes control again and switches to the shell.
  async function openShell() {
    if (control || (await takeControl())) show("shell");
  }

  const state = computer.data?.state;
  // An unknown id (or another space's: the API answers both alike) and a deleted computer get a
  // page that says so, not "Loading…" for ever; any other failure to read it is shown as is.
  // (An address that is no computer id at all never gets here: main.tsx routes it home.)
  const missing =
    state === "deleted" || (computer.error instanceof RakazoApiError && computer.error.code === "NOT_FOUND");
  if (missing || (computer.error && !computer.data)) {
    return (
      <div className="page computer-view">
        <nav aria-label="breadcrumb">
          <a href="#/">{t("app.back")}</a>
        </nav>
        <h1>{t(missing ? "view.notFound" : "view.unreadable")}</h1>
        <p role={missing ? undefined : "alert"}>
          {missing ? t("view.notFoundBody") : t("app.error", { message: errorMessage(computer.error) })}
        </p>
        <p>
          <a href="#/">{t("view.notFoundBack")}</a>
        </p>
      </div>
    );
  }
  // TRM-7: the Shell tab only where the computer's provider serves a browser terminal.
  const tabs: readonly Tab[] = computer.data?.capabilities.terminal
    ? ["screen", "shell", "files"]
    : ["screen", "files"];
  return (
    <div className="page computer-view">
      <nav aria-label="breadcrumb">
        <a href="#/">{t("app.back")}</a>
      </nav>
      <div className="title-row">
        <h1>{computer.data?.name ?? t("app.loading")}</h1>
        {state && (
          <span className={`badge state-${state}`} data-testid="computer-state">
            {t(`state.${state}` as MessageKey)}
          </span>
        )}
        <OperationsPill computerId={computerId} onChange={computer.refresh} />
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {state && state !== "running" && (
        <p>{t("view.notRunning", { state: t(`state.${state}` as MessageKey) })}</p>
      )}
      {state === "running" && bot && (
        <div className="workspace">
          <div className="stage">
            <div className="controls">
              <label htmlFor="bot-select">{t("view.bot")}</label>
              <select
                id="bot-select"
                value={bot.id}
                onChange={(e) => {
                  setControl(false);
                  location.hash = `#/computers/${computerId}?bot=${e.target.value}`;
                }}
              >
                {bots.data?.map((b) => (
                  <option key={b.id} value={b.id}>
                    {b.name}
                  </option>
                ))}
              </select>
              <span className="meta" data-testid="control-state">
                {control ? t("view.inControl") : t("view.watching")}
              </span>
              {control ? (
                <button type="button" onClick={release} disabled={busy}>
                  {t("view.release")}
                </button>
              ) : (
                <button type="button" className="primary" onClick={() => void takeControl()} disabled={busy}>
                  {t("view.takeControl")}
                </button>
              )}
            </div>
            {stopFirst && (
              <div className="callout" role="alert" data-testid="stop-first">
                <p>{t("view.stopFirst")}</p>
                <button type="button" className="danger" onClick={stopBotAndTakeOver} disabled={busy}>
                  {t("view.stopBot")}
                </button>
              </div>
            )}
            <div className="dock-tabs" role="tablist" aria-label={t("dock.label")}>
              {tabs.map((id) => (
                <button
                  key={id}
                  type="button"
                  role="tab"
                  id={`tab-${id}`}
                  aria-selected={tab === id}
                  aria-controls="dock-panel"
                  onClick={() => (id === "shell" ? void openShell() : show(id))}
                >
                  {id === "shell" && !control ? t("dock.openShell") : t(`dock.${id}`)}
                </button>
              ))}
            </div>
            <div className="dock-panel" id="dock-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
              <div className="screen-holder" data-status={screenStatus}>
                <Screen
                  key={`${bot.id}:${control ? "control" : "view"}`}
                  computerId={computerId}
                  botId={bot.id}
                  policy={control ? "control" : "view"}
                  label={t("view.screen", { bot: bot.name })}
                  onStatus={setScreenStatus}
                />
                {/* The dock's windows lie over the screen; "Screen" hides them, their sessions stay. */}
                {opened.has("shell") && tabs.includes("shell") && (
                  <div className="dock-window" hidden={tab !== "shell"}>
                    <Shell
                      computerId={computerId}
                      botId={bot.id}
                      visible={tab === "shell"}
                      inControl={control}
                    />
                  </div>
                )}
                {opened.has("files") && (
                  <div className="dock-window" hidden={tab !== "files"}>
                    <Files
                      computerId={computerId}
                      botId={bot.id}
                      visible={tab === "files"}
                      inControl={control}
                      commandTick={commandTick}
                    />
                  </div>
                )}
              </div>
            </div>
          </div>
          <Activity computerId={computerId} onEvent={() => setCommandTick((n) => n + 1)} />
        </div>
      )}
    </div>
  );
}
