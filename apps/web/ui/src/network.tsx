import type { RpcOutput } from "@rakazo/client";
import { type FormEvent, useState } from "react";
import { api, errorMessage, RakazoApiError } from "./api.ts";
import { type MessageKey, useT } from "./i18n.ts";

type Policy = RpcOutput<"computer/get">["network"];
type Mode = Policy["mode"];
const MODES: readonly Mode[] = ["none", "egress", "allowlist"];
/** The API's own check of a host (api-contract views.ts), so a typo is named before sending. */
const HOST =
  /^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?$|^[0-9.]+$|^\[?[0-9A-Fa-f:.]+\]?$/;

/** `docs.example.com:443,80` per line; an IPv6 literal in brackets keeps its colons. */
function parseHosts(text: string): { allow: NonNullable<Policy["allow"]> } | { bad: string } {
  const allow: NonNullable<Policy["allow"]>[number][] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const match = /^(\[[^\]]+\]|[^:]+)(?::([\d,\s]+))?$/.exec(line);
    const host = match?.[1]?.trim() ?? "";
    const ports = match?.[2]
      ?.split(",")
      .map((p) => p.trim())
      .filter((p) => p !== "")
      .map(Number);
    if (!match || !HOST.test(host) || ports?.some((p) => !Number.isInteger(p) || p < 1 || p > 65_535))
      return { bad: line };
    allow.push(ports?.length ? { host, ports } : { host });
  }
  return { allow };
}

const hostsText = (policy: Policy) =>
  (policy.allow ?? []).map((e) => (e.ports ? `${e.host}:${e.ports.join(",")}` : e.host)).join("\n");

/**
 * The network policy of a computer that is not running, changed in place (`computer/setNetwork`,
 * applied at its next start); hosts are checked here as the API checks them, so a typo is named
 * before anything is sent.
 */
export function NetworkEditor(props: { computerId: string; policy: Policy; onSaved(): void }) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const [mode, setMode] = useState<Mode>(props.policy.mode);
  const [hosts, setHosts] = useState(hostsText(props.policy));
  const [message, setMessage] = useState<{ text: string; error: boolean }>();
  const [busy, setBusy] = useState(false);

  async function save(event: FormEvent) {
    event.preventDefault();
    setMessage(undefined);
    let network: Policy = { mode };
    if (mode === "allowlist") {
      const parsed = parseHosts(hosts);
      if ("bad" in parsed) {
        setMessage({ text: t("network.badHost", { line: parsed.bad }), error: true });
        return;
      }
      if (parsed.allow.length === 0) {
        setMessage({ text: t("network.noHosts"), error: true });
        return;
      }
      network = { mode, allow: parsed.allow };
    }
    setBusy(true);
    try {
      await api.call("computer/setNetwork", { computerId: props.computerId, network });
      setMessage({ text: t("network.saved"), error: false });
      setOpen(false);
      props.onSaved();
    } catch (e) {
      const text =
        e instanceof RakazoApiError && e.code === "UNSUPPORTED"
          ? t("network.unsupported")
          : e instanceof RakazoApiError && e.code === "CONFLICT"
            ? t("network.onlyStopped")
            : t("app.error", { message: errorMessage(e) });
      setMessage({ text, error: true });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="network-editor" data-testid="network-editor">
      {!open && (
        <button
          type="button"
          onClick={() => {
            setMode(props.policy.mode);
            setHosts(hostsText(props.policy));
            setMessage(undefined);
            setOpen(true);
          }}
        >
          {t("network.change")}
        </button>
      )}
      {open && (
        <form onSubmit={save} aria-labelledby="network-title">
          <h2 id="network-title">{t("network.title")}</h2>
          <label htmlFor="network-mode">{t("network.mode")}</label>{" "}
          <select id="network-mode" value={mode} onChange={(e) => setMode(e.currentTarget.value as Mode)}>
            {MODES.map((m) => (
              <option key={m} value={m}>
                {t(`view.network.${m}` as MessageKey)}
              </option>
            ))}
          </select>
          {mode === "allowlist" && (
            <p>
              <label htmlFor="network-hosts">{t("network.hosts")}</label>
              <textarea
                id="network-hosts"
                rows={4}
                value={hosts}
                spellCheck={false}
                onChange={(e) => setHosts(e.currentTarget.value)}
              />
            </p>
          )}
          <p className="actions">
            <button type="button" onClick={() => setOpen(false)}>
              {t("confirm.cancel")}
            </button>{" "}
            <button type="submit" className="primary" disabled={busy}>
              {t("network.save")}
            </button>
          </p>
        </form>
      )}
      {message && (
        <p role={message.error ? "alert" : "status"} className={message.error ? "error" : "note"}>
          {message.text}
        </p>
      )}
    </div>
  );
}
