/** FIL-1: browse and preview a computer's files, live when it runs, stored when it does not. */
import { MAX_ATTACHMENT_BYTES } from "@rakazo/protocol";

export { MAX_ATTACHMENT_BYTES };

import { z } from "zod";
import { attachmentId, botId, computerId, defineContract, timestamp } from "../define.ts";
import { CONTROLLED_MACHINE_ERRORS } from "./error-sets.ts";

const source = z.enum(["stored", "live"]);

/**
 * The one path rule of every file RPC (docs/agent-tools.md): relative to the bot's folder when
 * `botId` is given, to the workspace root when not; answers carry the resolved workspace path.
 */
const PATH_RULE =
  "Relative to the working folder: the bot's folder (bots/<botId>/ on a Team Computer, the root on a Private one) when botId is given, else the workspace root. `..` may climb to shared/ but never out of the workspace; absolute paths are refused. The answer's `path` is the resolved workspace path, valid without botId.";
const filePath = z.string().min(1).max(4_096).describe(PATH_RULE);
/** Uploads and writes name their bot, and land inside its folder (INVALID_PATH otherwise). */
const storedPath = z
  .string()
  .min(1)
  .max(4_096)
  .describe(
    `${PATH_RULE} An upload or write must land inside the bot's folder or, on a Team Computer, in shared/ (../../shared/…); INVALID_PATH otherwise.`,
  );
/** A bot whose folder relative paths start from (the one path rule); omitted: the workspace root. */
const workingBot = botId.optional().describe("The bot whose folder relative paths start from.");

export const computerFilesList = defineContract({
  name: "computer/files/list",
  auth: "token",
  summary: "List a folder",
  description:
    "The entries of one folder of the computer's workspace: live while the computer runs, from its stored workspace when it does not (`source`).",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "CONFLICT",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "UNSUPPORTED",
  ],
  input: z.strictObject({
    computerId,
    botId: workingBot,
    path: z.string().max(4_096).default("").describe(PATH_RULE),
  }),
  output: z.strictObject({
    path: z.string(),
    source,
    entries: z.array(
      z.strictObject({
        path: z.string(),
        name: z.string(),
        type: z.enum(["file", "directory", "symlink", "other"]),
        size: z.number(),
        modifiedAt: timestamp,
      }),
    ),
  }),
});

export const computerFilesRead = defineContract({
  name: "computer/files/read",
  auth: "token",
  summary: "Preview a file",
  description:
    "A file's text for preview (`text` is null when it is not UTF-8), live or from the stored workspace.",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "CONFLICT",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "UNSUPPORTED",
  ],
  input: z.strictObject({ computerId, botId: workingBot, path: filePath }),
  /** `text` is null when the file is not UTF-8 text (binary files are not previewed). */
  output: z.strictObject({ path: z.string(), size: z.number(), text: z.string().nullable(), source }),
});

/** The base64 text of MAX_ATTACHMENT_BYTES bytes. */
const MAX_BASE64_CHARS = Math.ceil(MAX_ATTACHMENT_BYTES / 3) * 4;
const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "expected base64");

/** A whole file's bytes (base64) as a download answers them. */
const downloadedFile = z.strictObject({
  path: z.string(),
  name: z.string().describe("The file's base name, for a save dialog."),
  size: z.number().int(),
  contentBase64: z.string(),
});

export const computerFilesDownload = defineContract({
  name: "computer/files/download",
  auth: "token",
  summary: "Download a file",
  description:
    "A file of a running computer, whole (at most the attachment size), base64. A stopped computer answers COMPUTER_NOT_READY with `details.state` (browsing and preview still work). The path is the workspace path `files/list` names.",
  errors: [
    "COMPUTER_GONE",
    "COMPUTER_NOT_READY",
    "DESKTOP_UNAVAILABLE",
    "FILE_NOT_FOUND",
    "FILE_TOO_LARGE",
    "INVALID_PATH",
    "MULTI_SCREEN_UNAVAILABLE",
    "NOT_FOUND",
    "PROCESS_LIMIT",
    "PROVIDER_ERROR",
    "UNSUPPORTED",
  ],
  input: z.strictObject({ computerId, botId: workingBot, path: filePath }),
  output: downloadedFile,
});

export const computerFilesUpload = defineContract({
  name: "computer/files/upload",
  auth: "token",
  summary: "Upload a file into a bot's folder or shared/",
  description:
    "A person's upload into the bot's folder or the Team Computer's `shared/` (the path is relative to the bot's folder). Precondition: the caller holds the control lease of that bot (`computer/takeControl`), else NOT_IN_CONTROL. More than the attachment size is FILE_TOO_LARGE before anything is stored; a failed upload leaves no partial file.",
  errors: CONTROLLED_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    botId,
    path: storedPath,
    contentBase64: base64.max(MAX_BASE64_CHARS + 4).describe("The file's bytes, base64 (standard alphabet)."),
  }),
  /** `path` is the workspace path (as files/list names it). */
  output: z.strictObject({ path: z.string(), size: z.number().int() }),
});

export const computerFilesWrite = defineContract({
  name: "computer/files/write",
  auth: "token",
  summary: "Write a text file into a bot's folder",
  description:
    "A text file written by a person into the bot's folder. Precondition: the caller holds the control lease of that bot (`computer/takeControl`), else NOT_IN_CONTROL. Same cap as upload (FILE_TOO_LARGE); a failed write leaves no partial file.",
  errors: CONTROLLED_MACHINE_ERRORS,
  input: z.strictObject({
    computerId,
    botId,
    path: storedPath,
    text: z.string().max(MAX_ATTACHMENT_BYTES),
  }),
  output: z.strictObject({ path: z.string(), size: z.number().int() }),
});

const attachmentView = z.strictObject({
  id: z.string(),
  computerId: z.string(),
  botId: z.string(),
  path: z.string().describe("The workspace path of the attached file (as files/list names it)."),
  name: z.string(),
  size: z.number().int(),
  note: z.string().nullable(),
  createdAt: timestamp,
});

export const computerAttachmentsList = defineContract({
  name: "computer/attachments/list",
  auth: "token",
  summary: "List attachments",
  description:
    "What bots attached on this computer (`attach_file`), newest first; downloadable even when the computer is stopped.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({
    computerId,
    botId: botId.optional(),
    limit: z.number().int().min(1).max(200).default(50),
  }),
  output: z.strictObject({ attachments: z.array(attachmentView) }),
});

export const computerAttachmentsDownload = defineContract({
  name: "computer/attachments/download",
  auth: "token",
  summary: "Download an attachment",
  description: "One stored attachment's bytes, base64.",
  errors: ["NOT_FOUND"],
  input: z.strictObject({ computerId, attachmentId }),
  output: downloadedFile,
});
