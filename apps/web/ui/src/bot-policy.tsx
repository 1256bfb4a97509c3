import { type FormEvent, useEffect, useState } from "react";
import { api, errorMessage } from "./api.ts";
import { type MessageKey, useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

const MODES = ["allow", "ask", "deny"] as const;
type Mode = (typeof MODES)[number];
const TOOLS = [
  "shell",
  "write_file",
  "attach_file",
  "computer_act",
  "open_path",
  "launch_app",
  "browser_navigate",
  "browser_act",
] as const;
type Tool = (typeof TOOLS)[number];

/** `example.test allow` lines → domain rules, or the first line that is not one. */
function parseDomains(text: string): { rules: { domain: string; mode: Mode }[] } | { bad: string } {
  const rules: { domain: string; mode: Mode }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const [domain, mode, ...rest] = line.split(/\s+/);
    if (
      !domain ||
      !MODES.includes(mode as Mode) ||
      rest.length > 0 ||
      !/^(\*\.)?[A-Za-z0-9.-]+$/.test(domain)
    )
      return { bad: line };
    rules.push({ domain, mode: mode as Mode });
  }
  return { rules };
}

/**
 * A bot's mutation policy (BRW-8, `bot/policy/get|set`): the mode for every change, a rule per
 * mutating tool ("as above" leaves it to the mode), and domain rules for opening web pages.
 */
export function BotPolicyEditor({ bot }: { bot: { id: string; name: string } }) {
  const t = useT();
  const current = usePoll(() => api.call("bot/policy/get", { botId: bot.id }), 30_000, [bot.id]);
  const [mode, setMode] = useState<Mode>("allow");
  const [tools, setTools] = useState<Partial<Record<Tool, Mode>>>({});
  const [domains, setDomains] = useState("");
  const [said, setSaid] = useState<{ text: string; error: boolean }>();
  const [busy, setBusy] = useState(false);
  const loaded = current.data;
  useEffect(() => {
    if (!loaded) return;
    setMode(loaded.policy.mode);
    setTools({ ...(loaded.policy.tools ?? {}) });
    setDomains((loaded.policy.domains ?? []).map((d) => `${d.domain} ${d.mode}`).join("\n"));
  }, [loaded]);

  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const parsed = parseDomains(domains);
    if ("bad" in parsed) {
      setSaid({ text: t("guard.badDomain", { line: parsed.bad }), error: true });
      return;
    }
    setBusy(true);
    try {
      await api.call("bot/policy/set", {
        botId: bot.id,
        policy: { mode, tools, ...(parsed.rules.length ? { domains: parsed.rules } : {}) },
      });
      setSaid({ text: t("guard.saved"), error: false });
    } catch (e) {
      setSaid({ text: t("app.error", { message: errorMessage(e) }), error: true });
    } finally {
      setBusy(false);
    }
  }

  const modeLabel = (m: Mode) => t(`mode.${m}` as MessageKey);
  return (
    <details className="card bot-policy">
      <summary>{t("guard.policyTitle", { bot: bot.name })}</summary>
      <form onSubmit={save}>
        <p className="meta">{t("guard.policyHelp")}</p>
        <label>
          {t("guard.mode")}{" "}
          <select value={mode} onChange={(e) => setMode(e.target.value as Mode)}>
            {MODES.map((m) => (
              <option key={m} value={m}>
                {modeLabel(m)}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          {TOOLS.map((tool) => (
            <label key={tool}>
              <code>{tool}</code>{" "}
              <select
                value={tools[tool] ?? ""}
                onChange={(e) => {
                  const value = e.target.value as Mode | "";
                  setTools(({ [tool]: _, ...rest }) => (value ? { ...rest, [tool]: value } : rest));
                }}
              >
                <option value="">{t("guard.asDefault")}</option>
                {MODES.map((m) => (
                  <option key={m} value={m}>
                    {modeLabel(m)}
                  </option>
                ))}
              </select>
            </label>
          ))}
        </fieldset>
        <label htmlFor={`domains-${bot.id}`}>{t("guard.domains")}</label>
        <textarea
          id={`domains-${bot.id}`}
          rows={3}
          value={domains}
          onChange={(e) => setDomains(e.target.value)}
        />
        <p>
          <button type="submit" className="primary" disabled={busy}>
            {t("guard.save")}
          </button>
        </p>
        {said && (
          <p role={said.error ? "alert" : "status"} className={said.error ? "error" : undefined}>
            {said.text}
          </p>
        )}
      </form>
    </details>
  );
}
