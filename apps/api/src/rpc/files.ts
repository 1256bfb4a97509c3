/** FIL-1: browse and preview a computer's files; FIL-3: download, upload, text writes, attachments. */
import * as contracts from "@rakazo/api-contract";
import {
  downloadAttachment,
  downloadComputerFile,
  listAttachments,
  listComputerFiles,
  readComputerFile,
  uploadComputerFile,
  writeComputerTextFile,
} from "@rakazo/services";
import { defineRpc } from "./define.ts";

export const computerFilesList = defineRpc(contracts.computerFilesList, listComputerFiles);

export const computerFilesRead = defineRpc(contracts.computerFilesRead, readComputerFile);

export const computerFilesDownload = defineRpc(contracts.computerFilesDownload, downloadComputerFile);

export const computerFilesUpload = defineRpc(contracts.computerFilesUpload, uploadComputerFile, {
  // Never the content.
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: outcome.ok
      ? `upload ${outcome.result.path} (${outcome.result.size} bytes)`
      : `upload ${input.path}`,
    details: outcome.ok ? { path: outcome.result.path, size: outcome.result.size } : { path: input.path },
  }),
});

export const computerFilesWrite = defineRpc(contracts.computerFilesWrite, writeComputerTextFile, {
  activity: (input, outcome) => ({
    computerId: input.computerId,
    botId: input.botId,
    line: outcome.ok ? `write ${outcome.result.path} (${outcome.result.size} bytes)` : `write ${input.path}`,
    details: outcome.ok ? { path: outcome.result.path, size: outcome.result.size } : { path: input.path },
  }),
});

export const computerAttachmentsList = defineRpc(contracts.computerAttachmentsList, listAttachments);

export const computerAttachmentsDownload = defineRpc(
  contracts.computerAttachmentsDownload,
  downloadAttachment,
);
