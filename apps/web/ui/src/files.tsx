import type { RpcOutput } from "@rakazo/client";
import { type ChangeEvent, useEffect, useState } from "react";
import { api, errorMessage, RakazoApiError } from "./api.ts";
import { useT } from "./i18n.ts";
import { DownloadIcon, FileIcon, FolderIcon, RefreshIcon, UpIcon, UploadIcon } from "./icons.tsx";
import { usePoll } from "./poll.ts";

type Entry = RpcOutput<"computer/files/list">["entries"][number];
type Mode = RpcOutput<"computer/get">["mode"];
const REFRESH_MS = 4_000;
const SHARED_FOLDER = "shared";

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);

/**
 * Where an upload into the workspace folder `folder` goes, as the upload RPC takes it (relative
 * to the bot's folder), or undefined where the API's guard would refuse it: a Team Computer's
 * bot stores only into its own folder and `shared/` (CMP-1, docs/agent-tools.md), a Private
 * Computer's bot anywhere in the workspace.
 */
function uploadPath(mode: Mode, botId: string, folder: string, name: string): string | undefined {
  if (mode !== "team") return folder === "" ? name : `${folder}/${name}`;
  const own = `bots/${botId}`;
  if (within(folder, own)) return folder === own ? name : `${folder.slice(own.length + 1)}/${name}`;
  if (within(folder, SHARED_FOLDER)) return `../../${folder}/${name}`;
  return undefined;
}

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
 * command (`commandTick`); text preview, download, and upload with control into the folder on
 * screen. Dot-entries (`.bash_history`, `.browser-profiles/`) stay behind "Show hidden files".
 */
export function Files(props: {
  computerId: string;
  botId: string;
  /** The computer's mode (where its bot may store files); undefined while it loads. */
  mode?: Mode | undefined;
  visible: boolean;
  inControl: boolean;
  commandTick: number;
}) {
  const t = useT();
  const [path, setPath] = useState("");
  const [preview, setPreview] = useState<{ name: string; text: string | null }>();
  const [message, setMessage] = useState<string>();
  const [showHidden, setShowHidden] = useState(false);
  const listing = usePoll(
    async () =>
      props.visible ? api.call("computer/files/list", { computerId: props.computerId, path }) : undefined,
    REFRESH_MS,
    [props.computerId, path, props.visible, props.commandTick],
  );
  const data = listing.data;
  // A preview or a message ("Uploaded x.") is about the folder it was shown in: cleared on leaving it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the folder changes
  useEffect(() => {
    setPreview(undefined);
    setMessage(undefined);
  }, [path]);

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

  // The bot's folder and shared/ exist once a bot has worked there; before, they list as empty
  // (an upload creates them) instead of showing the last folder's entries.
  const missing = listing.error instanceof RakazoApiError && listing.error.code === "FILE_NOT_FOUND";
  const folder = missing ? path : (data?.path ?? path);
  const target = (name: string) =>
    props.mode === undefined ? undefined : uploadPath(props.mode, props.botId, folder, name);
  // Refused here, before anything is sent, where the API's guard would refuse it.
  const writable = target("x") !== undefined;

  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const input = event.currentTarget;
    const file = input.files?.[0];
    if (!file) return;
    try {
      const stored = target(file.name);
      if (stored === undefined) {
        setMessage(t("files.notWritable", { folder: `/${folder}` }));
        return;
      }
      const bytes = new Uint8Array(await file.arrayBuffer());
      // The folder on screen, relative to the bot's folder; the listing stays where it is.
      await api.call("computer/files/upload", {
        computerId: props.computerId,
        botId: props.botId,
        path: stored,
        contentBase64: toBase64(bytes),
      });
      setMessage(t("files.uploaded", { name: file.name }));
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
  const entries = missing ? [] : (data?.entries ?? []);
  const shown = showHidden ? entries : entries.filter((entry) => !entry.name.startsWith("."));
  const hiddenCount = entries.length - shown.length;
  const canUpload = props.inControl && writable;
  return (
    <div className="files" hidden={!props.visible} data-testid="files">
      <div className="toolbar">
        <span>
          {t("files.path")}: <code data-testid="files-path">/{folder}</code>
        </span>
        <button
          type="button"
          className="icon-button"
          disabled={path === ""}
          onClick={() => setPath(parent)}
          aria-label={t("files.up")}
          title={t("files.up")}
        >
          <UpIcon />
        </button>
        <button
          type="button"
          className="icon-button"
          onClick={listing.refresh}
          aria-label={t("files.refresh")}
          title={t("files.refresh")}
        >
          <RefreshIcon />
        </button>
        <label
          className={`button${canUpload ? "" : " disabled"}`}
          title={t("files.uploadHere", { folder: `/${folder}` })}
        >
          <UploadIcon /> {t("files.upload")}
          <input type="file" className="sr-only" onChange={upload} disabled={!canUpload} />
        </label>
        <label className="toggle">
          <input
            type="checkbox"
            checked={showHidden}
            onChange={(e) => setShowHidden(e.currentTarget.checked)}
          />{" "}
          {t("files.showHidden")}
        </label>
      </div>
      {!props.inControl && <p className="help">{t("files.uploadNeedsControl")}</p>}
      {props.inControl && props.mode !== undefined && !writable && (
        <div className="help" data-testid="files-not-writable">
          <p>{t("files.notWritable", { folder: `/${folder}` })}</p>
          {props.mode === "team" && (
            <p className="actions">
              <button type="button" onClick={() => setPath(`bots/${props.botId}`)}>
                {t("files.openBotFolder")}
              </button>{" "}
              <button type="button" onClick={() => setPath(SHARED_FOLDER)}>
                {t("files.openShared")}
              </button>
            </p>
          )}
        </div>
      )}
      {message && (
        <p role="status" className="note">
          {message}
        </p>
      )}
      {data?.source === "stored" && <p className="help">{t("files.stored")}</p>}
      {missing && <p>{t("files.notYet")}</p>}
      {data && !missing && shown.length === 0 && <p>{t("files.empty")}</p>}
      <ul className="entries">
        {shown.map((entry) => (
          <li key={entry.path} data-type={entry.type}>
            <button type="button" className="link" onClick={() => open(entry)}>
              {entry.type === "directory" ? <FolderIcon /> : <FileIcon />}{" "}
              {entry.type === "directory" ? `${entry.name}/` : entry.name}
            </button>
            {entry.type === "file" && (
              <>
                <span className="meta">{entry.size} B</span>
                <button
                  type="button"
                  className="small icon-button"
                  aria-label={t("files.download", { name: entry.name })}
                  title={t("files.download", { name: entry.name })}
                  onClick={() => download(entry)}
                >
                  <DownloadIcon />
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      {hiddenCount > 0 && (
        <p className="help" data-testid="files-hidden-count">
          {t("files.hiddenCount", { count: hiddenCount })}
        </p>
      )}
      {preview && (
        <section aria-label={t("files.preview", { name: preview.name })}>
          <h3>{preview.name}</h3>
          {preview.text === null ? <p>{t("files.binary")}</p> : <pre className="preview">{preview.text}</pre>}
        </section>
      )}
    </div>
  );
}
