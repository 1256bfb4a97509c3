/** FIL-1: browse and preview a computer's files, live when it runs, stored when it does not. */
import { z } from "zod";
import { defineContract, ids, timestamp } from "../define.ts";

const computerId = z.string().regex(ids.computer, "expected a computer id (cmp_…)");
const source = z.enum(["stored", "live"]);

export const computerFilesList = defineContract({
  name: "computer/files/list",
  auth: "token",
  input: z.strictObject({ computerId, path: z.string().max(4_096).default("") }),
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
  input: z.strictObject({ computerId, path: z.string().min(1).max(4_096) }),
  /** `text` is null when the file is not UTF-8 text (binary files are not previewed). */
  output: z.strictObject({ path: z.string(), size: z.number(), text: z.string().nullable(), source }),
});
