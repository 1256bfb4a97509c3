import { type ReactNode, useEffect, useRef } from "react";
import { useT } from "./i18n.ts";

/** A modal confirmation (native <dialog>: focus trap, Escape cancels). */
export function Confirm(props: {
  title: string;
  children: ReactNode;
  confirmLabel?: string;
  confirmDisabled?: boolean;
  onConfirm(): void;
  onCancel(): void;
}) {
  const t = useT();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} className="confirm" aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div className="actions">
        <button type="button" onClick={props.onCancel}>
          {t("confirm.cancel")}
        </button>
        <button type="button" className="primary" disabled={props.confirmDisabled} onClick={props.onConfirm}>
          {props.confirmLabel ?? t("confirm.ok")}
        </button>
      </div>
    </dialog>
  );
}
