import { useEffect, useRef, useState } from "react";
import { api, errorMessage, sameOriginPath } from "./api.ts";
import { type MessageKey, useT } from "./i18n.ts";

export type ScreenStatus = "loading" | "connecting" | "connected" | "failed" | "disconnected" | "refused";
const REPORTED = /^(loading|connecting|connected|failed|disconnected)$/;
const LOADING_LIMIT_MS = 15_000;

/**
 * One bot's screen (SCR-8): mints a screen URL, then frames it and fetches the proxied page once,
 * side by side; the frame stays hidden until that fetch says the page is served, and a refusal
 * removes it and shows the fixed, localized reason instead, so a refused URL never shows as a
 * broken frame (framing after the fetch cost the person one more round trip on every open).
 * The frame has `sandbox="allow-scripts"` only, so the screen page runs in an opaque origin and
 * cannot reach this page (its own response also carries `CSP: sandbox allow-scripts`). Statuses come from the proxy's reporter by postMessage,
 * accepted only from this frame's window. `failed`, or not `connected` within 15 s of framing
 * (stuck at `loading`, or at `connecting` behind a gateway that never answers), shows the error
 * and Retry.
 */
export function Screen(props: {
  computerId: string;
  botId: string;
  policy: "view" | "control";
  label: string;
  onStatus?(status: ScreenStatus): void;
}) {
  const t = useT();
  const [status, setStatus] = useState<ScreenStatus>("loading");
  const [src, setSrc] = useState<string>();
  /** The prefetch answered 2xx: only then is the frame shown and its reports believed. */
  const [served, setServed] = useState(false);
  /** 15 s passed since framing without `connected`. */
  const [expired, setExpired] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const frame = useRef<HTMLIFrameElement>(null);
  const onStatus = useRef(props.onStatus);
  onStatus.current = props.onStatus;

  // biome-ignore lint/correctness/useExhaustiveDependencies: attempt re-runs it (Retry)
  useEffect(() => {
    let alive = true;
    setStatus("loading");
    setSrc(undefined);
    setServed(false);
    setExpired(false);
    (async () => {
      const minted = await api.call("computer/screenUrl", {
        computerId: props.computerId,
        botId: props.botId,
        policy: props.policy,
      });
      const path = sameOriginPath(minted.url);
      if (!alive) return;
      setSrc(path);
      // The prefetch: a refusal (forged, expired, revoked, gone) becomes the fixed text, never a
      // broken frame. The capability is in the path, so the request carries no cookie.
      const response = await fetch(path, { credentials: "omit", cache: "no-store" });
      if (!alive) return;
      if (!response.ok) {
        setStatus("refused");
        return;
      }
      setServed(true);
    })().catch((error: unknown) => {
      if (!alive) return;
      console.error(errorMessage(error));
      setStatus("refused");
    });
    return () => {
      alive = false;
    };
  }, [props.computerId, props.botId, props.policy, attempt]);

  useEffect(() => {
    if (!src) return;
    const listener = (event: MessageEvent) => {
      if (!frame.current || event.source !== frame.current.contentWindow) return;
      const data = event.data as { type?: unknown; status?: unknown } | null;
      if (data?.type !== "rakazo:screen" || typeof data.status !== "string" || !REPORTED.test(data.status))
        return;
      setStatus(data.status as ScreenStatus);
    };
    window.addEventListener("message", listener);
    return () => window.removeEventListener("message", listener);
  }, [src]);

  // 15 s from framing without `connected` is a failure, also where the page got as far as
  // `connecting`: a gateway that takes the connection and never answers leaves noVNC there.
  useEffect(() => {
    if (!src) return;
    const timer = setTimeout(() => {
      setExpired(true);
      setStatus((s) => (s === "loading" || s === "connecting" ? "failed" : s));
    }, LOADING_LIMIT_MS);
    return () => clearTimeout(timer);
  }, [src]);

  // Until the prefetch answers, the frame's own reports are kept but not shown: a refused URL's
  // page must not pass for a screen. A refusal shows at once, and so does the 15 s limit.
  const shown: ScreenStatus = served
    ? status
    : status === "refused"
      ? "refused"
      : expired
        ? "failed"
        : "loading";
  useEffect(() => {
    onStatus.current?.(shown);
  }, [shown]);
  const broken = shown === "failed" || shown === "refused";
  return (
    <div
      className={`screen screen-${shown}`}
      data-screen-status={shown}
      aria-busy={shown === "loading" || shown === "connecting"}
    >
      {src && !broken && (
        <iframe
          ref={frame}
          className={served ? undefined : "screen-unchecked"}
          title={props.label}
          src={src}
          sandbox="allow-scripts"
          referrerPolicy="no-referrer"
          allow="clipboard-read 'none'; clipboard-write 'none'"
        />
      )}
      {(shown === "loading" || shown === "connecting") && (
        <p className="screen-note" role="status">
          {t(`screen.${shown}` as MessageKey)}
        </p>
      )}
      {(broken || shown === "disconnected") && (
        <div className="screen-error" role="alert">
          <p data-testid="screen-error">{t(`screen.${shown}` as MessageKey)}</p>
          <button type="button" onClick={() => setAttempt((n) => n + 1)}>
            {t("screen.retry")}
          </button>
        </div>
      )}
    </div>
  );
}
