import type { RpcOutput } from "@rakazo/client";
import { type ChangeEvent, useEffect, useState } from "react";
import { api, errorMessage, RakazoApiError } from "./api.ts";
import { useT } from "./i18n.ts";
import { usePoll } from "./poll.ts";

type Entry = RpcOutput<"computer/files/list">["entries"][number];
const REFRESH_MS = 4_000;

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * The Files window (FIL-2, FIL-3): the bot's workspace listed live (or from the stored workspace
 * when the computer is stopped), refreshed every few seconds while visible and after each bot
 * command (`commandTick`); text preview, download, and upload with control.
 */
export function Files(props: {
  computerId: string;
  botId: string;
  visible: boolean;
  inControl: boolean;
  commandTick: number;
}) {
  const t = useT();
  const [path, setPath] = useState("");
  const [preview, setPreview] = useState<{ name: string; text: string | null }>();
  const [message, setMessage] = useState<string>();
  const listing = usePoll(
    async () =>
      props.visible ? api.call("computer/files/list", { computerId: props.computerId, path }) : undefined,
    REFRESH_MS,
    [props.computerId, path, props.visible, props.commandTick],
  );
  const data = listing.data;
  // biome-ignore lint/correctness/useExhaustiveDependencies: clear the preview when the folder changes
  useEffect(() => setPreview(undefined), [path]);

  async function open(entry: Entry) {
    if (entry.type === "directory") {
      setPath(entry.path);
      return;
    }
    try {
      const read = await api.call("computer/files/read", { computerId: props.computerId, path: entry.path });
      setPreview({ name: entry.name, text: read.text });
    } catch (e) {
      setMessage(t("app.error", { message: errorMessage(e) }));
    }
  }

  async function download(entry: Entry) {
    try {
      const file = await api.call("computer/files/download", {
        computerId: props.computerId,
        path: entry.path,
      });
      const url = URL.createObjectURL(new Blob([fromBase64(file.contentBase64)]));
      const link = document.createElement("a");
      link.href = url;
      link.download = file.name;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setMessage(t("app.error", { message: errorMessage(e) }));
    }
  }

  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const input = event.currentTarget;
    const file = input.files?.[0];
    if (!file) return;
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      // Paths are relative to the bot's folder; the listing names workspace paths.
      const stored = await api.call("computer/files/upload", {
        computerId: props.computerId,
        botId: props.botId,
        path: file.name,
        contentBase64: toBase64(bytes),
      });
      setMessage(t("files.uploaded", { name: file.name }));
      // Show the folder it landed in (the bot's folder on a Team Computer).
      setPath(stored.path.includes("/") ? stored.path.slice(0, stored.path.lastIndexOf("/")) : "");
      listing.refresh();
    } catch (e) {
      setMessage(
        e instanceof RakazoApiError && e.code === "NOT_IN_CONTROL"
          ? t("files.uploadNeedsControl")
          : t("app.error", { message: errorMessage(e) }),
      );
    } finally {
      input.value = "";
    }
  }

  const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
  return (
    <div className="files" hidden={!props.visible} data-testid="files">
      <div className="toolbar">
        <span>
          {t("files.path")}: <code>/{data?.path ?? path}</code>
        </span>
        <button type="button" disabled={path === ""} onClick={() => setPath(parent)}>
          {t("files.up")}
        </button>
        <button type="button" onClick={listing.refresh}>
          {t("files.refresh")}
        </button>
        <label className={`button${props.inControl ? "" : " disabled"}`}>
          {t("files.upload")}
          <input type="file" className="sr-only" onChange={upload} disabled={!props.inControl} />
        </label>
      </div>
      {!props.inControl && <p className="help">{t("files.uploadNeedsControl")}</p>}
      {message && (
        <p role="status" className="note">
          {message}
        </p>
      )}
      {data?.source === "stored" && <p className="help">{t("files.stored")}</p>}
      {data && data.entries.length === 0 && <p>{t("files.empty")}</p>}
      <ul className="entries">
        {data?.entries.map((entry) => (
          <li key={entry.path} data-type={entry.type}>
            <button type="button" className="link" onClick={() => open(entry)}>
              {entry.type === "directory" ? `${entry.name}/` : entry.name}
            </button>
            {entry.type === "file" && (
              <>
                <span className="meta">{entry.size} B</span>
                <button
                  type="button"
                  className="small"
                  aria-label={t("files.download", { name: entry.name })}
                  onClick={() => download(entry)}
                >
                  ⭳
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      {preview && (
        <section aria-label={t("files.preview", { name: preview.name })}>
          <h3>{preview.name}</h3>
          {preview.text === null ? <p>{t("files.binary")}</p> : <pre className="preview">{preview.text}</pre>}
        </section>
      )}
    </div>
  );
}
