import type { RpcOutput } from "@rakazo/client";
import { type FormEvent, useContext, useEffect, useState } from "react";
import { api, auth, errorMessage, RakazoApiError } from "./api.ts";
import { Confirm } from "./confirm.tsx";
import { LocaleContext, type MessageKey, useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

type Member = RpcOutput<"member/list">["members"][number];
type Role = Member["role"];
const ROLES: readonly Role[] = ["owner", "member", "viewer"];

/** How often an open page asks whether its session still stands (a removed person's page ends within a second). */
const SESSION_CHECK_MS = 700;

/**
 * Signs the page out as soon as the API stops taking its session (revoked, expired, or its
 * person removed from their last space): the app's polls are seconds apart, this is not.
 */
export function SessionWatch() {
  useEffect(() => {
    let alive = true;
    const check = async () => {
      const live = await auth.session().catch(() => true);
      if (alive && !live) window.dispatchEvent(new Event("rakazo:signed-out"));
    };
    const timer = setInterval(() => void check(), SESSION_CHECK_MS);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, []);
  return null;
}

/** The invite link the web app offers for a code: the code rides in the fragment, never to a server. */
function inviteLink(code: string): string {
  return `${location.origin}/#/invite/${code}`;
}

/**
 * A space's people: everyone with their role, the server owner; an owner also invites (a link
 * and its code, shown once), withdraws open invites, changes roles and removes people; anyone
 * may leave.
 */
export function Members({ spaceId }: { spaceId: string }) {
  const t = useT();
  const { locale } = useContext(LocaleContext);
  const members = usePoll(() => api.call("member/list", { spaceId }), 3_000, [spaceId]);
  const spaces = usePoll(() => api.call("space/list", {}), 10_000, []);
  const space = spaces.data?.find((s) => s.id === spaceId);
  const owner = space?.role === "owner";
  const invites = usePoll(
    () => (owner ? api.call("invite/list", { spaceId }) : Promise.resolve([])),
    10_000,
    [spaceId, owner],
  );
  const [made, setMade] = useState<{ code: string; expiresAt: string }>();
  const [copied, setCopied] = useState<string>();
  const [pending, setPending] = useState<Member>();
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<string>();
  const when = (value: string) => new Date(value).toLocaleString(locale);
  const roleName = (role: Role) => t(`members.role.${role}` as MessageKey);

  async function run(action: () => Promise<unknown>) {
    setError(undefined);
    try {
      await action();
      members.refresh();
      invites.refresh();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
  }

  async function invite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const role = String(new FormData(event.currentTarget).get("role")) === "viewer" ? "viewer" : "member";
    await run(async () => {
      const result = await api.call("invite/create", { spaceId, role });
      setMade({ code: result.code, expiresAt: result.expiresAt });
      setCopied(undefined);
    });
  }

  async function copy(what: string, text: string) {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(what);
    } catch {
      setError(t("members.copyFailed"));
    }
  }

  async function remove(member: Member) {
    setPending(undefined);
    await run(async () => {
      await api.call("member/remove", { spaceId, userId: member.userId });
      if (member.you) location.hash = "#/";
      else setNote(t("members.removed", { name: member.name }));
    });
  }

  const gone = members.error instanceof RakazoApiError && members.error.code === "NOT_FOUND";
  const title = t("members.title", { space: space?.name ?? "…" });
  return (
    <div className="page">
      <p>
        <a href="#/">{t("app.back")}</a>
      </p>
      <h1>{title}</h1>
      <p className="help">{t("members.help")}</p>
      {gone && (
        <p role="alert" className="error">
          {t("members.notFound")}
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" aria-live="polite">
        {note}
      </p>
      {members.data?.serverOwner && (
        <p className="meta" data-testid="server-owner">
          {t("members.serverOwnerIs", { name: members.data.serverOwner.name })}
        </p>
      )}
      <section className="card" aria-labelledby="members-list-title">
        <h2 id="members-list-title">{t("members.list")}</h2>
        {members.data === undefined && !gone && <p>{t("app.loading")}</p>}
        <ul className="tokens">
          {members.data?.members.map((member) => (
            <li key={member.userId} className="token-row" data-testid="member-row" data-role={member.role}>
              <strong>{member.name}</strong>
              {member.you && <span className="badge">{t("members.you")}</span>}
              {member.serverOwner && <span className="badge">{t("members.serverOwner")}</span>}
              {owner ? (
                <select
                  aria-label={t("members.role", { name: member.name })}
                  value={member.role}
                  onChange={(e) =>
                    void run(() =>
                      api.call("member/setRole", {
                        spaceId,
                        userId: member.userId,
                        role: e.target.value as Role,
                      }),
                    )
                  }
                >
                  {ROLES.map((role) => (
                    <option key={role} value={role}>
                      {roleName(role)}
                    </option>
                  ))}
                </select>
              ) : (
                <span className="badge">{roleName(member.role)}</span>
              )}
              <span className="meta">
                {t("members.joined")}: <time dateTime={member.joinedAt}>{when(member.joinedAt)}</time>
              </span>
              {(owner || member.you) && (
                <span className="actions">
                  <button
                    type="button"
                    className="danger"
                    aria-label={
                      member.you ? t("members.leave") : t("members.removeNamed", { name: member.name })
                    }
                    onClick={() => setPending(member)}
                  >
                    {member.you ? t("members.leave") : t("members.remove")}
                  </button>
                </span>
              )}
            </li>
          ))}
        </ul>
      </section>
      {owner && (
        <section className="card" aria-labelledby="invite-title">
          <h2 id="invite-title">{t("members.invite")}</h2>
          <form className="inline" onSubmit={invite}>
            <label htmlFor="invite-role">{t("members.inviteRole")}</label>
            <select id="invite-role" name="role" defaultValue="member">
              <option value="member">{roleName("member")}</option>
              <option value="viewer">{roleName("viewer")}</option>
            </select>
            <button type="submit" className="primary">
              {t("members.inviteCreate")}
            </button>
          </form>
          {made && (
            <div className="minted">
              <p>{t("members.inviteShownOnce", { time: when(made.expiresAt) })}</p>
              <label htmlFor="invite-link">{t("members.inviteLinkLabel")}</label>
              <input id="invite-link" readOnly value={inviteLink(made.code)} data-testid="invite-link" />
              <button type="button" onClick={() => void copy("link", inviteLink(made.code))}>
                {t("members.copyLink")}
              </button>
              <p>
                {t("members.inviteCodeLabel")}: <code data-testid="invite-code">{made.code}</code>{" "}
                <button type="button" onClick={() => void copy("code", made.code)}>
                  {t("members.copyCode")}
                </button>
              </p>
              <span role="status" className="meta">
                {copied ? t("members.copied") : ""}
              </span>
            </div>
          )}
          <h3>{t("members.openInvites")}</h3>
          {invites.data?.length === 0 && <p>{t("members.noInvites")}</p>}
          <ul className="tokens">
            {invites.data?.map((open) => (
              <li key={open.id} className="token-row" data-testid="invite-row">
                <span>
                  {t("members.inviteFor", { role: roleName(open.role), time: when(open.expiresAt) })}
                </span>
                <span className="actions">
                  <button
                    type="button"
                    onClick={() => void run(() => api.call("invite/revoke", { spaceId, inviteId: open.id }))}
                  >
                    {t("members.revokeInvite")}
                  </button>
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {pending && (
        <Confirm
          title={pending.you ? t("members.leave") : t("members.removeNamed", { name: pending.name })}
          confirmLabel={pending.you ? t("members.leave") : t("members.remove")}
          onConfirm={() => void remove(pending)}
          onCancel={() => setPending(undefined)}
        >
          <p>{t("members.confirmRemove", { name: pending.name })}</p>
        </Confirm>
      )}
    </div>
  );
}
