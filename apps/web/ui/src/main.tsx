import { StrictMode, useCallback, useContext, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { auth } from "./api.ts";
import { ComputerView } from "./computer-view.tsx";
import { Home } from "./home.tsx";
import { initialLocale, LOCALES, type Locale, LocaleContext, useT } from "./i18n.ts";
import { InvitePage } from "./invite.tsx";
import { Members, SessionWatch } from "./members.tsx";
import { SignIn } from "./sign-in.tsx";
import { Tokens } from "./tokens.tsx";
import "./styles.css";

function useHashRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const update = () => setHash(location.hash);
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return hash.replace(/^#/, "") || "/";
}

function Shell({ onSignOut }: { onSignOut(): void }) {
  const t = useT();
  const route = useHashRoute();
  const computer = /^\/computers\/(cmp_[a-z0-9]{20})(?:\?bot=(bot_[a-z0-9]{20}))?$/.exec(route);
  const members = /^\/spaces\/(spc_[a-z0-9]{20})\/members$/.exec(route)?.[1];
  const invite = inviteCode(route);
  return (
    <>
      <Header onSignOut={onSignOut} />
      <SessionWatch />
      <main id="main" tabIndex={-1}>
        {invite !== undefined ? (
          <InvitePage code={invite} signedIn />
        ) : members ? (
          <Members key={members} spaceId={members} />
        ) : computer?.[1] ? (
          <ComputerView key={computer[1]} computerId={computer[1]} botId={computer[2]} />
        ) : route === "/tokens" ? (
          <Tokens />
        ) : (
          <Home />
        )}
      </main>
      <p className="sr-only" aria-live="polite">
        {t("app.title")}
      </p>
    </>
  );
}

/** The code of an invite link (`#/invite/<code>`), "" for `#/invite`, else undefined. */
function inviteCode(route: string): string | undefined {
  const match = /^\/invite(?:\/([^/?#]*))?$/.exec(route);
  return match ? decodeURIComponent(match[1] ?? "") : undefined;
}

function Header({ onSignOut }: { onSignOut?: () => void }) {
  const t = useT();
  const { locale, setLocale } = useContext(LocaleContext);
  return (
    <header className="top">
      <button type="button" className="skip" onClick={() => document.getElementById("main")?.focus()}>
        {t("app.skip")}
      </button>
      <a className="brand" href="#/">
        {t("app.title")}
      </a>
      <span className="grow" />
      <label className="locale">
        <span className="sr-only">{t("app.language")}</span>
        <select
          aria-label={t("app.language")}
          value={locale}
          onChange={(e) => setLocale(e.target.value as Locale)}
        >
          {Object.entries(LOCALES).map(([id, l]) => (
            <option key={id} value={id}>
              {l.name}
            </option>
          ))}
        </select>
      </label>
      {onSignOut && <a href="#/tokens">{t("tokens.title")}</a>}
      {onSignOut && (
        <button type="button" onClick={onSignOut}>
          {t("app.signOut")}
        </button>
      )}
    </header>
  );
}

function App() {
  const [locale, setLocaleRaw] = useState<Locale>(initialLocale);
  const setLocale = useCallback((l: Locale) => {
    localStorage.setItem("rakazo.locale", l);
    setLocaleRaw(l);
  }, []);
  const [signedIn, setSignedIn] = useState<boolean | undefined>(undefined);
  const invite = inviteCode(useHashRoute());
  useEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);
  useEffect(() => {
    auth.session().then(setSignedIn, () => setSignedIn(false));
    const out = () => setSignedIn(false);
    window.addEventListener("rakazo:signed-out", out);
    return () => window.removeEventListener("rakazo:signed-out", out);
  }, []);
  const signOut = async () => {
    await auth.signOut().catch(() => undefined);
    setSignedIn(false);
    location.hash = "#/";
  };
  return (
    <LocaleContext.Provider value={{ locale, setLocale }}>
      {signedIn === undefined ? null : signedIn ? (
        <Shell onSignOut={signOut} />
      ) : (
        <>
          <Header />
          <main id="main" tabIndex={-1}>
            {invite !== undefined ? (
              <InvitePage code={invite} signedIn={false} onSignedIn={() => setSignedIn(true)} />
            ) : (
              <SignIn onSignedIn={() => setSignedIn(true)} />
            )}
          </main>
        </>
      )}
    </LocaleContext.Provider>
  );
}

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
