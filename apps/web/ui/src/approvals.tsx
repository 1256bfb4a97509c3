import { useState } from "react";
import { api, errorMessage } from "./api.ts";
import { BotPolicyEditor } from "./bot-policy.tsx";
import { useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

/**
 * The mutation guard in the computer view (BRW-8): the actions a bot's policy asked a person
 * about, each with its redacted description and Approve / Deny (`approval/decide`), and the
 * bot's policy editor. Polled like the rest of the view (docs/decisions.md).
 */
export function Guard({ computerId, bot }: { computerId: string; bot: { id: string; name: string } }) {
  return (
    <>
      <Approvals computerId={computerId} bots={[bot]} />
      <BotPolicyEditor bot={bot} />
    </>
  );
}

function Approvals({
  computerId,
  bots,
}: {
  computerId: string;
  bots: readonly { id: string; name: string }[];
}) {
  const t = useT();
  const pending = usePoll(() => api.call("approval/list", { computerId }), 1_000, [computerId]);
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<string>();

  async function decide(approvalId: string, decision: "approve" | "deny") {
    setBusy(true);
    try {
      await api.call("approval/decide", { approvalId, decision });
      setSaid(t(decision === "approve" ? "guard.approved" : "guard.denied"));
    } catch (e) {
      setSaid(t("app.error", { message: errorMessage(e) }));
    } finally {
      setBusy(false);
      pending.refresh();
    }
  }

  return (
    <div aria-live="polite">
      {(pending.data ?? []).map((approval) => {
        const bot = bots.find((b) => b.id === approval.botId)?.name ?? approval.botId;
        const time = new Date(approval.expiresAt).toLocaleTimeString();
        return (
          <section
            key={approval.id}
            className="callout approval"
            aria-labelledby={`approval-${approval.id}`}
            data-testid="approval-notice"
          >
            <h2 id={`approval-${approval.id}`}>{t("guard.asks", { bot })}</h2>
            <p>
              {t("guard.action", { action: "" })}
              <code>{approval.description}</code>
            </p>
            <p className="meta">{t("guard.rule", { rule: approval.rule, time })}</p>
            <p className="controls">
              <button
                type="button"
                className="primary"
                disabled={busy}
                onClick={() => void decide(approval.id, "approve")}
              >
                {t("guard.approve")}
              </button>{" "}
              <button
                type="button"
                className="danger"
                disabled={busy}
                onClick={() => void decide(approval.id, "deny")}
              >
                {t("guard.deny")}
              </button>
            </p>
          </section>
        );
      })}
      {said && <p role="status">{said}</p>}
    </div>
  );
}
