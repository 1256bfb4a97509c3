import type { RpcOutput } from "@rakazo/client";
import { useEffect, useRef, useState } from "react";
import { api, errorMessage } from "./api.ts";
import { Confirm } from "./confirm.tsx";
import { type MessageKey, useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

type Operation = RpcOutput<"computer/operations">[number];

/** Polled every second while an operation is queued or running, else every 3 s. */
const FAST_MS = 1_000;
const SLOW_MS = 3_000;
/** How long a finished operation stays in the pill: a 1 s update is seen, not missed between polls. */
const FINISHED_SHOWN_MS = 15_000;
/** Failures stay in the pill for a week, as the API's default list keeps them. */
const FAILED_SHOWN_MS = 7 * 24 * 3_600_000;

const active = (op: Operation) => op.status === "queued" || op.status === "running";

/**
 * A computer's operations, polled fast while one is active. `tick` polls now (after an action);
 * `onSettled` is called when an operation seen active has finished (the computer's state moved).
 * The computer view polls once for its pill and its history, so the two never disagree.
 */
export function useOperations(computerId: string, tick = 0, onSettled?: () => void) {
  const [ms, setMs] = useState(SLOW_MS);
  const ops = usePoll(() => api.call("computer/operations", { computerId, history: true }), ms, [
    computerId,
    tick,
  ]);
  const busy = (ops.data ?? []).some(active);
  useEffect(() => setMs(busy ? FAST_MS : SLOW_MS), [busy]);
  const seenActive = useRef(new Set<string>());
  const settledRef = useRef(onSettled);
  settledRef.current = onSettled;
  useEffect(() => {
    let settled = false;
    for (const op of ops.data ?? []) {
      if (active(op)) seenActive.current.add(op.id);
      else if (seenActive.current.delete(op.id)) settled = true;
    }
    if (settled) settledRef.current?.();
  }, [ops.data]);
  return ops;
}

/**
 * What still needs the person's eye: running work, failures and interruptions (OPS-2), and the
 * newest operation that just succeeded, for a while, so a short one is seen at all.
 */
function relevant(ops: readonly Operation[], now: number): Operation[] {
  const newest = new Map<string, Operation>();
  for (const op of ops) {
    const seen = newest.get(op.kind);
    if (!seen || seen.createdAt < op.createdAt) newest.set(op.kind, op);
  }
  return [...newest.values()].filter(
    (op) =>
      active(op) ||
      op.status === "interrupted" ||
      (op.status === "failed" && now - Date.parse(op.updatedAt) < FAILED_SHOWN_MS) ||
      (op.status === "succeeded" &&
        op.finishedAt !== null &&
        now - Date.parse(op.finishedAt) < FINISHED_SHOWN_MS),
  );
}

/**
 * A compact background pill per computer with the operations' real stages (OPS-2): read from the
 * API on every load, so reopening the app restores active operations and failures. An
 * interrupted one offers the owner's "Release computer" with the workers-stopped confirmation.
 * `onChange` is called after a release and when an operation it saw running has finished.
 */
export function OperationsPill({ computerId, onChange }: { computerId: string; onChange?: () => void }) {
  return <OperationsPillView ops={useOperations(computerId, 0, onChange)} onChange={onChange} />;
}

type PolledOperations = ReturnType<typeof useOperations>;

/** The pill over operations its caller polls (`useOperations`). */
export function OperationsPillView({ ops, onChange }: { ops: PolledOperations; onChange?: () => void }) {
  const t = useT();
  const [releasing, setReleasing] = useState<Operation>();
  const [stopped, setStopped] = useState(false);
  const [message, setMessage] = useState<string>();
  const shown = relevant(ops.data ?? [], Date.now());
  if (shown.length === 0 && !message) return null;

  async function release(op: Operation) {
    setReleasing(undefined);
    try {
      await api.call("computer/releaseInterrupted", { id: op.id, workersStopped: true });
      setMessage(t("ops.released"));
      ops.refresh();
      onChange?.();
    } catch (e) {
      setMessage(t("app.error", { message: errorMessage(e) }));
    }
  }

  return (
    <span className="ops" role="status" aria-label={t("ops.title")}>
      {shown.map((op) => (
        <span key={op.id} className={`pill op-${op.status}`} data-testid="operation">
          {op.status === "failed"
            ? t("ops.failed", { kind: op.kind, error: op.error ?? op.stage })
            : op.status === "interrupted"
              ? t("ops.interrupted", { kind: op.kind, stage: op.stage })
              : op.status === "succeeded"
                ? t("ops.succeeded", { kind: op.kind })
                : t("ops.active", { kind: op.kind, stage: op.stage })}
          {op.status === "interrupted" && (
            <button
              type="button"
              className="danger small"
              onClick={() => {
                setStopped(false);
                setReleasing(op);
              }}
            >
              {t("ops.release")}
            </button>
          )}
        </span>
      ))}
      {message && <span className="pill">{message}</span>}
      {releasing && (
        <Confirm
          title={t("ops.releaseTitle")}
          confirmLabel={t("ops.release")}
          confirmDisabled={!stopped}
          onCancel={() => setReleasing(undefined)}
          onConfirm={() => release(releasing)}
        >
          <p>{t("ops.releaseText")}</p>
          <label className="check">
            <input type="checkbox" checked={stopped} onChange={(e) => setStopped(e.target.checked)} />
            {t("ops.workersStopped")}
          </label>
        </Confirm>
      )}
    </span>
  );
}

/**
 * A computer's operations history (OPS-2), newest first: kind, outcome, when, and the stages —
 * the API stores an operation's current stage only, so the stages listed are those this page saw
 * while polling (every second while one runs) plus the final one.
 */
export function OperationsHistory({ ops }: { ops: PolledOperations }) {
  const t = useT();
  const stages = useRef(new Map<string, string[]>());
  for (const op of ops.data ?? []) {
    const seen = stages.current.get(op.id) ?? [];
    if (seen.at(-1) !== op.stage) stages.current.set(op.id, [...seen, op.stage]);
  }
  const list = [...(ops.data ?? [])].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, 20);
  return (
    <section className="history" aria-labelledby="ops-history-title">
      <h2 id="ops-history-title">{t("ops.history")}</h2>
      {ops.data && list.length === 0 && <p>{t("ops.none")}</p>}
      <ol className="events" data-testid="operations-history">
        {list.map((op) => (
          <li key={op.id} data-kind={op.kind} data-status={op.status}>
            <time dateTime={op.createdAt}>{new Date(op.createdAt).toLocaleString()}</time>{" "}
            <strong>{op.kind}</strong>{" "}
            <span className={`pill op-${op.status}`}>{t(`ops.status.${op.status}` as MessageKey)}</span>{" "}
            <span className="meta" data-testid="operation-stages">
              {t("ops.stages", { stages: (stages.current.get(op.id) ?? [op.stage]).join(" → ") })}
            </span>
            {op.finishedAt && (
              <span className="meta">
                {" "}
                {t("ops.took", {
                  seconds: ((Date.parse(op.finishedAt) - Date.parse(op.createdAt)) / 1000).toFixed(1),
                })}
              </span>
            )}
            {op.error && <p className="error">{op.error}</p>}
          </li>
        ))}
      </ol>
    </section>
  );
}
