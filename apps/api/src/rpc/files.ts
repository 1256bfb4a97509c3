/** FIL-1: browse and preview a computer's files, live when it runs, stored when it does not. */
import { listComputerFiles, readComputerFile } from "@rakazo/services";
import { z } from "zod";
import { defineRpc, ids } from "./define.ts";

const computerId = z.string().regex(ids.computer, "expected a computer id (cmp_…)");

export const computerFilesList = defineRpc({
  name: "computer/files/list",
  auth: "token",
  input: z.strictObject({ computerId, path: z.string().max(4_096).default("") }),
  handler: (ctx, caller, input) => listComputerFiles(ctx, caller, input),
});

export const computerFilesRead = defineRpc({
  name: "computer/files/read",
  auth: "token",
  input: z.strictObject({ computerId, path: z.string().min(1).max(4_096) }),
  handler: (ctx, caller, input) => readComputerFile(ctx, caller, input),
});
