/** FIL-1: browse and preview a computer's files, live when it runs, stored when it does not. */
import { MAX_ATTACHMENT_BYTES } from "@rakazo/protocol";

export { MAX_ATTACHMENT_BYTES };

import { z } from "zod";
import { attachmentId, botId, computerId, defineContract, timestamp } from "../define.ts";

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
  .describe(`${PATH_RULE} An upload or write must land inside the bot's folder.`);
/** A bot whose folder relative paths start from (the one path rule); omitted: the workspace root. */
const workingBot = botId.optional().describe("The bot whose folder relative paths start from.");

export const computerFilesList = defineContract({
  name: "computer/files/list",
  auth: "token",
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
  /** The file's base name, for a save dialog. */
  name: z.string(),
  size: z.number().int(),
  contentBase64: z.string(),
});

/**
 * FIL-3: a file of a running computer, whole (at most MAX_ATTACHMENT_BYTES). A stopped computer
 * answers COMPUTER_NOT_READY with `details.state` (browsing and preview still work: files/list,
 * files/read). The path is the workspace path files/list names.
 */
export const computerFilesDownload = defineContract({
  name: "computer/files/download",
  auth: "token",
  input: z.strictObject({ computerId, botId: workingBot, path: filePath }),
  output: downloadedFile,
});

/**
 * FIL-3: a person's upload into the bot's folder (the path is relative to it, as the bot's
 * tools name paths). Needs the caller's control lease of that bot (NOT_IN_CONTROL otherwise);
 * more than MAX_ATTACHMENT_BYTES is FILE_TOO_LARGE before anything is stored; a failed upload
 * leaves no partial file.
 */
export const computerFilesUpload = defineContract({
  name: "computer/files/upload",
  auth: "token",
  input: z.strictObject({
    computerId,
    botId,
    path: storedPath,
    /** The file's bytes, base64 (standard alphabet). */
    contentBase64: base64.max(MAX_BASE64_CHARS + 4),
  }),
  /** `path` is the workspace path (as files/list names it). */
  output: z.strictObject({ path: z.string(), size: z.number().int() }),
});

/** FIL-3: a text file written by a person (same rules as upload: control, cap, no partial file). */
export const computerFilesWrite = defineContract({
  name: "computer/files/write",
  auth: "token",
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
  /** The workspace path of the attached file (as files/list names it). */
  path: z.string(),
  name: z.string(),
  size: z.number().int(),
  note: z.string().nullable(),
  createdAt: timestamp,
});

/** What `attach_file` stored on this computer, newest first (downloadable even when it is stopped). */
export const computerAttachmentsList = defineContract({
  name: "computer/attachments/list",
  auth: "token",
  input: z.strictObject({
    computerId,
    botId: botId.optional(),
    limit: z.number().int().min(1).max(200).default(50),
  }),
  output: z.strictObject({ attachments: z.array(attachmentView) }),
});

/** One stored attachment's bytes. */
export const computerAttachmentsDownload = defineContract({
  name: "computer/attachments/download",
  auth: "token",
  input: z.strictObject({ computerId, attachmentId }),
  output: downloadedFile,
});
