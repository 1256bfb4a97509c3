import { SandboxError } from "./errors.ts";

/**
 * Normalises a workspace-relative path: "" and "." mean the root; absolute paths, `..` and
 * NUL bytes are refused (PER-6 applies the same rule to archives).
 */
export function normalizeWorkspacePath(input: string): string {
  if (input.includes("\0")) throw new SandboxError("INVALID_PATH", "path contains a NUL byte");
  if (input.startsWith("/")) throw new SandboxError("INVALID_PATH", "path must be relative to the workspace");
  const parts: string[] = [];
  for (const part of input.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") throw new SandboxError("INVALID_PATH", "path must not contain '..'");
    parts.push(part);
  }
  return parts.join("/");
}
