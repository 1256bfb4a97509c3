/** read_file, write_file, list_files (read-only ones unrecorded) and attach_file (TOOL-1, TOOL-4). */

import { attachAgentFile, listAgentFiles, readAgentFile, writeAgentFile } from "../services-internal.ts";
import { fence } from "../session.ts";
import { defineTool, mutate, type ToolFactory, text } from "./common.ts";

/** The most text `read_file` hands the model. */
const READ_FILE_CHARS = 100_000;

export const readFile: ToolFactory = (session) =>
  defineTool(
    "read_file",
    "Read a file",
    "Read a text file (path relative to your folder, where your shell starts; on a Team Computer `../../shared/` is the team's shared folder).",
    async ({ path }) => {
      const bytes = await readAgentFile(session.ctx, session.caller, { ...fence(session), path });
      if (bytes.includes(0))
        return text(`${path} is a binary file of ${bytes.byteLength} bytes.`, { size: bytes.byteLength });
      const content = new TextDecoder().decode(bytes);
      const cut = content.length > READ_FILE_CHARS;
      return text(
        cut ? `${content.slice(0, READ_FILE_CHARS)}\n[… cut at ${READ_FILE_CHARS} characters]` : content,
        {
          size: bytes.byteLength,
          truncated: cut,
        },
      );
    },
  );

export const writeFile: ToolFactory = (session) =>
  defineTool(
    "write_file",
    "Write a file",
    "Create or replace a text file in the workspace (parent folders are created).",
    async ({ path, content }) =>
      mutate(
        session,
        "write_file",
        { path, size: Buffer.byteLength(content) },
        async () => {
          const { size } = await writeAgentFile(session.ctx, session.caller, {
            ...fence(session),
            path,
            data: content,
          });
          return {
            value: text(`Wrote ${size} bytes to ${path}.`, { path, size }),
            activity: { line: `write_file ${path} (${size} bytes)`, details: { path, size } },
          };
        },
        () => ({ line: `write_file ${path}`, details: { path } }),
      ),
  );

export const listFiles: ToolFactory = (session) =>
  defineTool(
    "list_files",
    "List files",
    "List the entries of a folder (your own folder when no path is given; paths are relative to it).",
    async ({ path }) => {
      const entries = await listAgentFiles(session.ctx, session.caller, {
        ...fence(session),
        path: path ?? "",
      });
      const lines = entries.map(
        (e) =>
          `${e.type === "directory" ? "dir " : "file"} ${e.path}${e.type === "file" ? ` (${e.size} bytes)` : ""}`,
      );
      return text(lines.length ? lines.join("\n") : "(empty folder)", { count: entries.length });
    },
  );

export const attachFile: ToolFactory = (session) =>
  defineTool(
    "attach_file",
    "Attach a file",
    "Attach a workspace file to your reply so the person you work for receives it.",
    async ({ path, note }) =>
      mutate(
        session,
        "attach_file",
        { path },
        async () => {
          // Stored (capped at the attachment size limit) so the person can download it (FIL-3).
          const stored = await attachAgentFile(session.ctx, session.caller, {
            ...fence(session),
            runId: session.runId,
            path,
            ...(note ? { note } : {}),
          });
          const attachment = { id: stored.id, path, size: stored.size, ...(note ? { note } : {}) };
          return {
            value: text(`Attached ${path} (${stored.size} bytes).`, { attachment }),
            activity: {
              line: `attach_file ${path} (${stored.size} bytes)`,
              details: { path, size: stored.size, attachmentId: stored.id },
            },
          };
        },
        () => ({ line: `attach_file ${path}`, details: { path } }),
      ),
  );
