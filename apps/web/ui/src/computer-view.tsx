import { useEffect, useState } from "react";
import { Activity } from "./activity.tsx";
import { api, errorMessage, RakazoApiError } from "./api.ts";
import { Guard } from "./approvals.tsx";
import { BotWork } from "./bot-work.tsx";
import { Confirm } from "./confirm.tsx";
import { Files } from "./files.tsx";
import { type MessageKey, useT } from "./i18n.ts";
import { NetworkEditor } from "./network.tsx";
import { OperationsHistory, OperationsPillView, useOperations } from "./operations.tsx";
import { usePoll } from "./poll.ts";
import { Screen, type ScreenStatus } from "./screen.tsx";
import { Shell, ShellTakeoverConfirm } from "./shell.tsx";

type Tab = "screen" | "shell" | "files";
type Verb = "start" | "update" | "recover";

/** States a computer passes through on its own: polled every second, with a progress line. */
const MOVING = new Set(["provisioning", "stopping", "deleting"]);

/**
 * The computer view: a bot's screen (view by default), "Take control"/release (TKO-1) with the 409
 * "Stop the bot first" explained and a Stop button (TKO-2), the dock (TRM-1…3, FIL-2), Activity
 * and the computer's operations (OPS-2). Every state has its view: a stopped one shows its stored
 * Files (FIL-1) and Activity with Start, a moving one says so with progress, a failed one its
 * last error and Recover, a running one Update where `canUpdate` (OPS-3); then the history.
 */
export function ComputerView({ computerId, botId }: { computerId: string; botId: string | undefined }) {
  const t = useT();
  const [pollMs, setPollMs] = useState(3_000);
  const computer = usePoll(() => api.call("computer/get", { computerId }), pollMs, [computerId]);
  // Named by the computer, the bots are read beside it rather than after it: the screen waits
  // for both, so the first pixel waits for the slower one instead of their sum.
  const bots = usePoll(() => api.call("bot/list", { computerId }), 15_000, [computerId]);
  const bot = bots.data?.find((b) => b.id === botId) ?? bots.data?.[0];
  const [control, setControl] = useState(false);
  const [busy, setBusy] = useState(false);
  const [stopFirst, setStopFirst] = useState(false);
  const [error, setError] = useState<string>();
  const [tab, setTab] = useState<Tab>("screen");
  const [opened, setOpened] = useState<Set<Tab>>(new Set(["screen"]));
  const [commandTick, setCommandTick] = useState(0);
  const [screenStatus, setScreenStatus] = useState<ScreenStatus>("loading");
  const [confirming, setConfirming] = useState<Verb>();
  const [opsTick, setOpsTick] = useState(0);
  const ops = useOperations(computerId, opsTick, computer.refresh);
  const moving = MOVING.has(computer.data?.state ?? "");
  useEffect(() => setPollMs(moving ? 1_000 : 3_000), [moving]);
  // A message is about the computer as it was: once its state changes, it is no longer true.
  const shownState = computer.data?.state;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on a change of state only
  useEffect(() => setError(undefined), [shownState]);

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
    setError(undefined);
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
    setError(undefined);
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

  // TRM-2: without control, "Open shell" takes control and switches to the shell — after the
  // person confirmed it, since the bot's own calls are refused while they are in control.
  const [confirmShell, setConfirmShell] = useState(false);
  async function openShell() {
    if (control) show("shell");
    else setConfirmShell(true);
  }

  // Start, Update and Recover: queued operations; the pill and history poll at once.
  async function act(verb: Verb) {
    setConfirming(undefined);
    setError(undefined);
    try {
      await api.call(`computer/${verb}`, { computerId });
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
    computer.refresh();
    setOpsTick((n) => n + 1);
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
        <OperationsPillView ops={ops} onChange={computer.refresh} />
      </div>
      {computer.data && (
        <p className="meta" data-testid="computer-details">
          {t("computer.provider")}: {computer.data.providerKind} · {t("view.size")}:{" "}
          {computer.data.size
            ? t("view.sizeValue", {
                memory: computer.data.size.memoryMib,
                cpus: computer.data.size.cpus,
                pids: computer.data.size.pids,
              })
            : t("view.sizeDefault")}{" "}
          · {t("view.network")}: {t(`view.network.${computer.data.network.mode}` as MessageKey)}
          {computer.data.network.allow?.length
            ? ` (${computer.data.network.allow.map((e) => e.host).join(", ")})`
            : ""}
        </p>
      )}
      {/* The network changes only while no machine runs (computer/setNetwork), at the next start. */}
      {computer.data && (state === "stopped" || state === "unprovisioned" || state === "failed") && (
        <NetworkEditor computerId={computerId} policy={computer.data.network} onSaved={computer.refresh} />
      )}
      {computer.data && (
        <div className="controls">
          {(state === "stopped" || state === "unprovisioned") && (
            <button type="button" className="primary" onClick={() => void act("start")}>
              {t("computer.start")}
            </button>
          )}
          {state === "running" && computer.data.canUpdate && (
            <button type="button" onClick={() => setConfirming("update")}>
              {t("computer.update")}
            </button>
          )}
          {state === "failed" && (
            <button type="button" className="danger" onClick={() => setConfirming("recover")}>
              {t("computer.recover")}
            </button>
          )}
        </div>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {state && moving && (
        <p role="status" className="progress" data-testid="computer-progress">
          <progress aria-label={t(`view.moving.${state}` as MessageKey)} />{" "}
          {t(`view.moving.${state}` as MessageKey)}
        </p>
      )}
      {state === "failed" && (
        <div className="callout" role="alert" data-testid="last-error">
          <p>{t("view.failed")}</p>
          <p>
            {t("view.lastError")}: <code>{computer.data?.lastError ?? t("view.noError")}</code>
          </p>
        </div>
      )}
      {(state === "stopped" || state === "unprovisioned") && (
        <p>{t("view.notRunning", { state: t(`state.${state}` as MessageKey) })}</p>
      )}
      {confirming && computer.data && (
        <Confirm
          title={t(confirming === "update" ? "view.updateTitle" : "view.recoverTitle")}
          confirmLabel={t(confirming === "update" ? "computer.update" : "computer.recover")}
          onCancel={() => setConfirming(undefined)}
          onConfirm={() => void act(confirming)}
        >
          <p>
            {t(confirming === "update" ? "confirm.update" : "confirm.recover", { name: computer.data.name })}
          </p>
          <p>{t(confirming === "update" ? "view.updateText" : "view.recoverText")}</p>
        </Confirm>
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
                      mode={computer.data?.mode}
                    />
                  </div>
                )}
              </div>
            </div>
          </div>
          <Activity computerId={computerId} onEvent={() => setCommandTick((n) => n + 1)} bots={bots.data} />
          {confirmShell && (
            <ShellTakeoverConfirm
              bot={bot.name}
              onCancel={() => setConfirmShell(false)}
              onConfirm={async () => {
                setConfirmShell(false);
                if (await takeControl()) show("shell");
              }}
            />
          )}
        </div>
      )}
      {state === "running" && bot && <Guard computerId={computerId} bot={bot} />}
      {state === "running" && bot && (
        <BotWork
          computerId={computerId}
          bot={bot}
          inControl={control}
          takeControl={takeControl}
          handBack={release}
        />
      )}
      {/* FIL-1: not running, the stored workspace is browsed and previewed (no upload). */}
      {state && state !== "running" && state !== "deleting" && (
        <div className="workspace">
          <section aria-labelledby="stored-files-title">
            <h2 id="stored-files-title">{t("view.storedFiles")}</h2>
            <Files
              computerId={computerId}
              botId={bot?.id ?? ""}
              visible
              inControl={false}
              commandTick={opsTick}
            />
          </section>
          <Activity computerId={computerId} bots={bots.data} />
        </div>
      )}
      {computer.data && <OperationsHistory ops={ops} />}
    </div>
  );
}
