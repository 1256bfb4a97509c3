import type { RpcOutput } from "@rakazo/client";
import { useState } from "react";
import { api, errorMessage } from "./api.ts";
import { Confirm } from "./confirm.tsx";
import { useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

type Operation = RpcOutput<"computer/operations">[number];

/** What still needs the person's eye: running work, failures and interruptions (OPS-2). */
function relevant(ops: readonly Operation[]): Operation[] {
  const newest = new Map<string, Operation>();
  for (const op of ops) {
    const seen = newest.get(op.kind);
    if (!seen || seen.createdAt < op.createdAt) newest.set(op.kind, op);
  }
  return [...newest.values()].filter(
    (op) =>
      op.status === "queued" ||
      op.status === "running" ||
      op.status === "failed" ||
      op.status === "interrupted",
  );
}

/**
 * A compact background pill per computer with the operations' real stages (OPS-2): read from the
 * API on every load, so reopening the app restores active operations and failures. An
 * interrupted one offers the owner's "Release computer" with the workers-stopped confirmation.
 */
export function OperationsPill({ computerId, onChange }: { computerId: string; onChange?: () => void }) {
  const t = useT();
  const ops = usePoll(() => api.call("computer/operations", { computerId }), 3_000, [computerId]);
  const [releasing, setReleasing] = useState<Operation>();
  const [stopped, setStopped] = useState(false);
  const [message, setMessage] = useState<string>();
  const shown = relevant(ops.data ?? []);
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
