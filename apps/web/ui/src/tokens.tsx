import type { RpcOutput } from "@rakazo/client";
import { type FormEvent, useContext, useState } from "react";
import { api, errorMessage } from "./api.ts";
import { Confirm } from "./confirm.tsx";
import { LocaleContext, useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

type Token = RpcOutput<"token/list">[number];

/**
 * The signed-in person's own API tokens: the live ones listed (never a secret), a new one
 * minted and its secret shown once with a copy button, any one but this browser's own session
 * revoked (signing out ends that one).
 */
export function Tokens() {
  const t = useT();
  const { locale } = useContext(LocaleContext);
  const tokens = usePoll(() => api.call("token/list", {}), 10_000, []);
  const [minted, setMinted] = useState<{ id: string; name: string; secret: string }>();
  const [copied, setCopied] = useState(false);
  const [pending, setPending] = useState<Token>();
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<string>();
  const when = (value: string | null) =>
    value === null ? t("tokens.never") : new Date(value).toLocaleString(locale);

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get("name") ?? "").trim();
    setError(undefined);
    setNote(undefined);
    try {
      const result = await api.call("token/create", { name });
      setMinted({ id: result.id, name, secret: result.token });
      setCopied(false);
      form.reset();
      tokens.refresh();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
  }

  async function copy(secret: string) {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      // No clipboard (plain HTTP on another host): the text is selectable instead.
      setError(t("tokens.copyFailed"));
    }
  }

  async function revoke(token: Token) {
    setPending(undefined);
    setError(undefined);
    try {
      await api.call("token/revoke", { tokenId: token.id });
      setNote(t("tokens.revoked", { name: token.name }));
      if (minted?.id === token.id) setMinted(undefined);
      tokens.refresh();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
  }

  return (
    <div className="page">
      <h1>{t("tokens.title")}</h1>
      <p className="help">{t("tokens.help")}</p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p role="status" aria-live="polite">
        {note}
      </p>
      <section className="card" aria-labelledby="new-token-title">
        <h2 id="new-token-title">{t("tokens.create")}</h2>
        <form className="inline" onSubmit={create}>
          <label htmlFor="token-name">{t("tokens.name")}</label>
          <input id="token-name" name="name" required maxLength={100} autoComplete="off" />
          <button type="submit" className="primary">
            {t("tokens.create")}
          </button>
        </form>
        {minted && (
          <div className="minted">
            <p>{t("tokens.shownOnce", { name: minted.name })}</p>
            <pre className="token" data-testid="new-token">
              {minted.secret}
            </pre>
            <button type="button" onClick={() => void copy(minted.secret)}>
              {t("tokens.copy")}
            </button>
            <span role="status" className="meta">
              {copied ? ` ${t("tokens.copied")}` : ""}
            </span>
          </div>
        )}
      </section>
      <section className="card" aria-labelledby="token-list-title">
        <h2 id="token-list-title">{t("tokens.list")}</h2>
        {tokens.data === undefined && <p>{t("app.loading")}</p>}
        <ul className="tokens">
          {tokens.data?.map((token) => (
            <li key={token.id} className="token-row" data-testid="token-row" data-kind={token.kind}>
              <strong>{token.name}</strong>
              <span className="badge">
                {token.current
                  ? t("tokens.thisSession")
                  : token.kind === "web_session"
                    ? t("tokens.kindSession")
                    : t("tokens.kindApi")}
              </span>
              <span className="meta">
                {t("tokens.created")}: <time dateTime={token.createdAt}>{when(token.createdAt)}</time> ·{" "}
                {t("tokens.lastUsed")}: {when(token.lastUsedAt)}
                {token.expiresAt !== null && (
                  <>
                    {" "}
                    · {t("tokens.expires")}: <time dateTime={token.expiresAt}>{when(token.expiresAt)}</time>
                  </>
                )}
              </span>
              {!token.current && (
                <span className="actions">
                  <button
                    type="button"
                    className="danger"
                    aria-label={t("tokens.revokeNamed", { name: token.name })}
                    onClick={() => setPending(token)}
                  >
                    {t("tokens.revoke")}
                  </button>
                </span>
              )}
            </li>
          ))}
        </ul>
      </section>
      {pending && (
        <Confirm
          title={t("tokens.confirmTitle", { name: pending.name })}
          confirmLabel={t("tokens.revoke")}
          onConfirm={() => void revoke(pending)}
          onCancel={() => setPending(undefined)}
        >
          <p>{pending.kind === "web_session" ? t("tokens.confirmSession") : t("tokens.confirmApi")}</p>
        </Confirm>
      )}
    </div>
  );
}
