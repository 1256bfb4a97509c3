/**
 * The `details.issues` of an INVALID_INPUT answer: one `{ path, message }` per field at fault.
 * An input that is one of several shapes (`bot/list`: `{ spaceId }` or `{ computerId }`) fails
 * in zod as one `invalid_union` issue at the union's own path, which names no field; here it
 * is replaced by the issues of the shape(s) the body came closest to (fewest issues), so a
 * mistyped `spaceId` is named as `spaceId`, and `{}` names each shape's missing field.
 */
import type { z } from "zod";

export interface InputIssue {
  readonly path: string;
  readonly message: string;
}

type Issue = z.core.$ZodIssue;

function flatten(issue: Issue, prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const fewest = Math.min(...issue.errors.map((branch) => branch.length));
    const closest = issue.errors.filter((branch) => branch.length === fewest);
    if (fewest > 0) return closest.flatMap((branch) => branch.flatMap((inner) => flatten(inner, path)));
  }
  return [{ path, message: issue.message }];
}

export function inputIssues(error: z.ZodError): InputIssue[] {
  const seen = new Set<string>();
  const issues: InputIssue[] = [];
  for (const issue of error.issues.flatMap((i) => flatten(i, []))) {
    const entry = { path: issue.path.map(String).join("."), message: issue.message };
    const key = `${entry.path}\u0000${entry.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(entry);
    }
  }
  return issues;
}
