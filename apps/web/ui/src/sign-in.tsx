import { type FormEvent, useEffect, useState } from "react";
import { auth, errorMessage, RakazoApiError } from "./api.ts";
import { useT } from "./i18n.ts";

/**
 * Sign-in with an API token, or first-run setup (the bootstrap), offered only while the
 * installation has no user (`/auth/setup`); a setup someone else finished first says so plainly.
 */
export function SignIn({ onSignedIn }: { onSignedIn(): void }) {
  const t = useT();
  const [mode, setMode] = useState<"signin" | "setup">("signin");
  const [error, setError] = useState<string>();
  const [shownToken, setShownToken] = useState<string>();
  const [busy, setBusy] = useState(false);
  /** Undefined until the web service said; an unanswered question offers setup (it refuses itself). */
  const [setUp, setSetUp] = useState<boolean>();

  useEffect(() => {
    let live = true;
    auth
      .setUp()
      .catch(() => false)
      .then((done) => live && setSetUp(done));
    return () => {
      live = false;
    };
  }, []);

  async function signIn(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      await auth.signIn(String(form.get("token") ?? ""));
      onSignedIn();
    } catch {
      setError(t("signin.failed"));
    } finally {
      setBusy(false);
    }
  }

  async function setup(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const result = await auth.bootstrap({
        userName: String(form.get("userName") ?? ""),
        spaceName: String(form.get("spaceName") ?? ""),
        botName: String(form.get("botName") ?? ""),
        bootstrapToken: String(form.get("bootstrapToken") ?? ""),
      });
      setShownToken(result.token);
    } catch (e) {
      if (e instanceof RakazoApiError && e.code === "ALREADY_BOOTSTRAPPED") {
        setSetUp(true);
        setMode("signin");
        setError(t("setup.already"));
      } else setError(t("app.error", { message: errorMessage(e) }));
    } finally {
      setBusy(false);
    }
  }

  if (shownToken)
    return (
      <section className="card narrow" aria-labelledby="setup-title">
        <h1 id="setup-title">{t("setup.title")}</h1>
        <p>{t("setup.done")}</p>
        <pre className="token" data-testid="bootstrap-token">
          {shownToken}
        </pre>
        <button type="button" className="primary" onClick={onSignedIn}>
          {t("setup.continue")}
        </button>
      </section>
    );

  return mode === "signin" ? (
    <section className="card narrow" aria-labelledby="signin-title">
      <h1 id="signin-title">{t("signin.title")}</h1>
      <form onSubmit={signIn}>
        <label htmlFor="token">{t("signin.token")}</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          required
          aria-describedby="token-help"
        />
        <p id="token-help" className="help">
          {t("signin.tokenHelp")}
        </p>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {t("signin.submit")}
        </button>
      </form>
      {setUp === false && (
        <button
          type="button"
          className="link"
          onClick={() => {
            setMode("setup");
            setError(undefined);
          }}
        >
          {t("signin.firstRun")}
        </button>
      )}
    </section>
  ) : (
    <section className="card narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">{t("setup.title")}</h1>
      <form onSubmit={setup}>
        <label htmlFor="userName">{t("setup.userName")}</label>
        <input id="userName" name="userName" defaultValue="admin" required />
        <label htmlFor="spaceName">{t("setup.spaceName")}</label>
        <input id="spaceName" name="spaceName" defaultValue="My Space" required />
        <label htmlFor="botName">{t("setup.botName")}</label>
        <input id="botName" name="botName" defaultValue="Assistant" required />
        <label htmlFor="bootstrapToken">{t("setup.bootstrapToken")}</label>
        <input id="bootstrapToken" name="bootstrapToken" type="password" autoComplete="off" />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {t("setup.submit")}
        </button>
      </form>
      <button
        type="button"
        className="link"
        onClick={() => {
          setMode("signin");
          setError(undefined);
        }}
      >
        {t("setup.haveToken")}
      </button>
    </section>
  );
}
