import type { RpcOutput } from "@rakazo/client";
import { type FormEvent, useState } from "react";
import { api, errorMessage } from "./api.ts";
import { WaitingRuns } from "./bot-work.tsx";
import { Confirm } from "./confirm.tsx";
import { type MessageKey, useT } from "./i18n.ts";
import { OperationsPill } from "./operations.tsx";
import { usePoll } from "./poll.ts";

type Computer = RpcOutput<"computer/list">[number];
type Space = RpcOutput<"space/list">[number];
type Verb = "start" | "stop" | "delete";

/** Spaces with their computers and bots; state refreshes every 3 s without reloading. */
export function Home() {
  const t = useT();
  const spaces = usePoll(() => api.call("space/list", {}), 10_000, []);
  const [error, setError] = useState<string>();

  async function createSpace(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get("name") ?? "");
    try {
      await api.call("space/create", { name });
      form.reset();
      spaces.refresh();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
  }

  return (
    <div className="page">
      <h1>{t("home.title")}</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {spaces.data === undefined && <p>{t("app.loading")}</p>}
      {spaces.data?.map((space) => (
        <SpaceSection key={space.id} space={space} />
      ))}
      <form className="inline" onSubmit={createSpace}>
        <label htmlFor="new-space">{t("home.spaceName")}</label>
        <input id="new-space" name="name" required maxLength={100} />
        <button type="submit">{t("home.newSpace")}</button>
      </form>
    </div>
  );
}

function SpaceSection({ space }: { space: Space }) {
  const t = useT();
  const computers = usePoll(() => api.call("computer/list", { spaceId: space.id }), 3_000, [space.id]);
  const bots = usePoll(() => api.call("bot/list", { spaceId: space.id }), 10_000, [space.id]);
  const [pending, setPending] = useState<{ verb: Verb; computer: Computer }>();
  const [error, setError] = useState<string>();

  async function act(verb: Verb, computer: Computer) {
    setPending(undefined);
    try {
      await api.call(`computer/${verb}`, { computerId: computer.id });
      computers.refresh();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
  }

  async function create(event: FormEvent<HTMLFormElement>, what: "computer" | "bot") {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get("name") ?? "").trim();
    try {
      if (what === "bot") await api.call("bot/create", { spaceId: space.id, name });
      else await api.call("computer/create", { spaceId: space.id, mode: "team", ...(name ? { name } : {}) });
      form.reset();
      computers.refresh();
      bots.refresh();
    } catch (e) {
      setError(t("app.error", { message: errorMessage(e) }));
    }
  }

  const live = (computers.data ?? []).filter((c) => c.state !== "deleted");
  return (
    <section className="card" aria-labelledby={`space-${space.id}`}>
      <h2 id={`space-${space.id}`}>{space.name}</h2>
      <p>
        <a href={`#/spaces/${space.id}/members`}>{t("members.link", { space: space.name })}</a>
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <h3>{t("home.computers")}</h3>
      <WaitingRuns spaceId={space.id} computers={live} bots={bots.data ?? []} />
      {computers.data && live.length === 0 && <p>{t("home.noComputers")}</p>}
      <ul className="computers">
        {live.map((computer) => (
          <li key={computer.id} className="computer" data-state={computer.state}>
            <a href={`#/computers/${computer.id}`} aria-label={t("computer.open", { name: computer.name })}>
              {computer.name}
            </a>
            <span className={`badge state-${computer.state}`} data-testid="computer-state">
              {t(`state.${computer.state}` as MessageKey)}
            </span>
            <span className="meta">
              {t("computer.provider")}: {computer.providerKind} · {t("computer.lastActivity")}:{" "}
              <time dateTime={computer.updatedAt}>{new Date(computer.updatedAt).toLocaleString()}</time>
            </span>
            <OperationsPill computerId={computer.id} />
            <span className="actions">
              {(computer.state === "stopped" ||
                computer.state === "failed" ||
                computer.state === "unprovisioned") && (
                <button type="button" onClick={() => setPending({ verb: "start", computer })}>
                  {t("computer.start")}
                </button>
              )}
              {computer.state === "running" && (
                <button type="button" onClick={() => setPending({ verb: "stop", computer })}>
                  {t("computer.stop")}
                </button>
              )}
              {computer.state !== "deleting" && (
                <button
                  type="button"
                  className="danger"
                  onClick={() => setPending({ verb: "delete", computer })}
                >
                  {t("computer.delete")}
                </button>
              )}
            </span>
          </li>
        ))}
      </ul>
      <form className="inline" onSubmit={(e) => create(e, "computer")}>
        <label htmlFor={`new-computer-${space.id}`}>{t("home.computerName")}</label>
        <input id={`new-computer-${space.id}`} name="name" maxLength={100} />
        <button type="submit">{t("home.newComputer")}</button>
      </form>
      <h3>{t("home.bots")}</h3>
      <ul className="bots">
        {bots.data?.map((bot) => (
          <li key={bot.id}>{bot.name}</li>
        ))}
      </ul>
      <form className="inline" onSubmit={(e) => create(e, "bot")}>
        <label htmlFor={`new-bot-${space.id}`}>{t("home.botName")}</label>
        <input id={`new-bot-${space.id}`} name="name" required maxLength={100} />
        <button type="submit">{t("home.newBot")}</button>
      </form>
      {pending && (
        <Confirm
          title={t(`computer.${pending.verb}`)}
          onCancel={() => setPending(undefined)}
          onConfirm={() => act(pending.verb, pending.computer)}
        >
          <p>{t(`confirm.${pending.verb}`, { name: pending.computer.name })}</p>
        </Confirm>
      )}
    </section>
  );
}
