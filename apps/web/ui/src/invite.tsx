import { type FormEvent, useState } from "react";
import { api, RakazoApiError } from "./api.ts";
import { type MessageKey, useT } from "./i18n.ts";

interface Joined {
  readonly spaceName: string;
  readonly role: string;
  /** A new person's first API token, shown once. */
  readonly token?: string;
}

/** `/auth/invite`: a new person joins with the code and this browser gets their session. */
async function redeem(code: string, userName: string): Promise<Joined & { token: string }> {
  const response = await fetch("/auth/invite", {
    method: "POST",
    headers: { "content-type": "application/json", "x-rakazo-app": "1" },
    credentials: "same-origin",
    body: JSON.stringify({ code, userName }),
  });
  const json = (await response.json().catch(() => null)) as {
    result?: Joined & { token: string };
    error?: { code: string; message: string };
  } | null;
  if (!response.ok || !json?.result)
    throw new RakazoApiError(response.status, json?.error?.code ?? "ERROR", json?.error?.message ?? "error");
  return json.result;
}

/**
 * Where an invite link lands (`#/invite/<code>`; the code never reaches a server's log). Signed
 * in, the person joins with their own account; otherwise they pick a name and join as a new
 * person, signed in here at once, with their API token shown once.
 */
export function InvitePage(props: { code: string; signedIn: boolean; onSignedIn?: () => void }) {
  const t = useT();
  const [joined, setJoined] = useState<Joined>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function join(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const code = String(data.get("code") ?? "").trim();
    setError(undefined);
    setBusy(true);
    try {
      if (props.signedIn) setJoined(await api.call("invite/accept", { code }));
      else setJoined(await redeem(code, String(data.get("userName") ?? "").trim()));
    } catch (e) {
      const known = e instanceof RakazoApiError && e.code.startsWith("INVITE_");
      const already = e instanceof RakazoApiError && e.code === "ALREADY_MEMBER";
      setError(
        known || already
          ? t(`invite.${(e as RakazoApiError).code}` as MessageKey)
          : t("app.error", { message: e instanceof Error ? e.message : String(e) }),
      );
    } finally {
      setBusy(false);
    }
  }

  function open() {
    location.hash = "#/";
    props.onSignedIn?.();
  }

  return (
    <div className="page">
      <h1>{t("invite.title")}</h1>
      {joined ? (
        <section className="card" aria-labelledby="joined-title">
          <div role="status">
            <h2 id="joined-title">
              {t("invite.joined", {
                space: joined.spaceName,
                role: t(`members.role.${joined.role}` as MessageKey),
              })}
            </h2>
          </div>
          {joined.token && (
            <div className="minted">
              <p>{t("invite.tokenShown")}</p>
              <pre className="token" data-testid="new-token">
                {joined.token}
              </pre>
            </div>
          )}
          <button type="button" className="primary" onClick={open}>
            {t("invite.open")}
          </button>
        </section>
      ) : (
        <form className="card" onSubmit={join} aria-labelledby="invite-form-title">
          <h2 id="invite-form-title">{props.signedIn ? t("invite.signedIn") : t("invite.newHere")}</h2>
          <p className="help">{t("invite.help")}</p>
          {error && (
            <p role="alert" className="error">
              {error}
            </p>
          )}
          <label htmlFor="invite-code">{t("invite.code")}</label>
          <input
            id="invite-code"
            name="code"
            required
            maxLength={64}
            defaultValue={props.code}
            autoComplete="off"
          />
          {!props.signedIn && (
            <>
              <label htmlFor="invite-name">{t("invite.name")}</label>
              <input id="invite-name" name="userName" required maxLength={100} autoComplete="name" />
            </>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {t("invite.join")}
          </button>
          {!props.signedIn && (
            <p className="meta">
              <a href="#/">{t("invite.haveToken")}</a>
            </p>
          )}
        </form>
      )}
    </div>
  );
}
