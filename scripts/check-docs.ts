/**
 * `pnpm run check:docs` (part of `pnpm lint`): fails on a comment or doc that points at a `*.md`
 * file the repository does not have, on a requirement id that docs/requirements.md does not
 * define, and on tracker history (the word issue and a number) in a comment, a test title or a doc: what the code
 * does belongs in the tree, how it got there in git. Code files are read for their comments
 * (and test titles) only (a path in a string is test data); docs are read whole. Prints
 * `file:line: reason` per finding and exits 1 if there is any.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** Where references are looked for, and in which files. */
const ROOTS = ["apps", "packages", "infra", "tests", "scripts", "bench", "docs", "README.md"];
const SCANNED = /\.(ts|tsx|md|sh|yml|cjs|jsonc)$/;
const SKIPPED = /(^|\/)(node_modules|dist|\.git)\//;
const REQUIREMENTS_PAGE = "docs/requirements.md";

export interface Finding {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
}

/** One line of commentary (or of a doc) with its 1-based line number. */
interface TextLine {
  readonly line: number;
  readonly text: string;
}

/**
 * The comment text of a JS-family file, line by line: `//` and `/* *\/` comments outside string
 * and template literals. Regex literals are not recognised; a quote inside one can hide the
 * rest of its line, which only ever loses a finding.
 */
export function jsComments(source: string): TextLine[] {
  const out = new Map<number, string>();
  const add = (line: number, ch: string) => out.set(line, (out.get(line) ?? "") + ch);
  let line = 1;
  let state: "code" | "line" | "block" | '"' | "'" | "`" = "code";
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    const next = source[i + 1];
    if (ch === "\n") {
      line++;
      if (state === "line" || state === '"' || state === "'") state = "code";
      continue;
    }
    if (state === "code") {
      if (ch === "/" && next === "/") state = "line";
      else if (ch === "/" && next === "*") state = "block";
      else if (ch === '"' || ch === "'" || ch === "`") state = ch;
      if (state === "line" || state === "block") i++;
    } else if (state === "line") add(line, ch);
    else if (state === "block") {
      if (ch === "*" && next === "/") {
        state = "code";
        i++;
      } else add(line, ch);
    } else if (ch === "\\") i++;
    else if (ch === state) state = "code";
  }
  return [...out].map(([n, text]) => ({ line: n, text }));
}

/** `#` comments of a shell or YAML file (a `#` at the start or after whitespace). */
export function hashComments(source: string): TextLine[] {
  return source.split("\n").flatMap((text, i) => {
    const at = text.search(/(^|\s)#/);
    return at < 0 ? [] : [{ line: i + 1, text: text.slice(at) }];
  });
}

/** What of a file is read: a doc whole, code for its comments. */
export function commentary(file: string, source: string): TextLine[] {
  if (file.endsWith(".md")) return source.split("\n").map((text, i) => ({ line: i + 1, text }));
  if (file.endsWith(".sh") || file.endsWith(".yml")) return hashComments(source);
  return jsComments(source);
}

/**
 * `*.md` names in a text: bare (`README.md`) or relative paths (`docs/providers.md`,
 * `../README.md`). Not URLs, nor paths from `/`, which in this code are mostly routes.
 */
export function mdReferences(text: string): string[] {
  return [...text.matchAll(/(?<![\w./:@-])(?:\.{1,2}\/)*[\w@.-]+(?:\/[\w@.-]+)*\.md(?![\w-])/g)].map(
    (m) => m[0],
  );
}

/**
 * Whether a reference names a file the repository has: a path relative to the citing file or
 * to the root (or the tail of one), a bare name anywhere. `files` are repository-relative.
 */
export function resolves(ref: string, fromFile: string, files: ReadonlySet<string>): boolean {
  if (!ref.includes("/")) {
    for (const f of files) if (f === ref || f.endsWith(`/${ref}`)) return true;
    return false;
  }
  const relative = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), ref));
  if (files.has(relative)) return true;
  if (ref.startsWith("../") || ref.startsWith("./")) return false;
  for (const f of files) if (f === ref || f.endsWith(`/${ref}`)) return true;
  return false;
}

/** The ids a requirements page defines: each list item that starts with one. */
export function definedIds(page: string): Set<string> {
  return new Set([...page.matchAll(/^- ([A-Z]{2,4}-\d+) /gm)].map((m) => m[1] as string));
}

/** Requirement ids cited in a text, for the prefixes the page uses (`TEST-NET-1` is not one). */
export function citedIds(text: string, prefixes: ReadonlySet<string>): string[] {
  return [...text.matchAll(/(?<![\w-])([A-Z]{2,4})-(\d+)(?![\w-])/g)]
    .filter((m) => prefixes.has(m[1] as string))
    .map((m) => m[0]);
}

/**
 * The titles of a code file's tests and suites (`describe`, `it`, `test`, with modifiers such as
 * `.each(…)`, `.skipIf(…)`) that start a line: a literal first argument, on the line where it
 * starts.
 */
export function testTitles(source: string): TextLine[] {
  const call = /^[ \t]*(?:describe|it|test)(?:\.\w+(?:\([^()]*\))?)*\(\s*(["'`])((?:\\.|(?!\1)[^\\])*)\1/gm;
  return [...source.matchAll(call)].map((m) => ({
    line: source.slice(0, m.index).split("\n").length,
    text: m[2] as string,
  }));
}

/** Tracker history in a text: `issue`, `issues` or `Issue` then a number (`#` optional). */
export function issueHistory(text: string): string[] {
  return [...text.matchAll(/\bissues? #?\d+/gi)].map((m) => m[0]);
}

/** Every finding for the given files, read through `read` (repository-relative paths). */
export function check(
  scanned: readonly string[],
  files: ReadonlySet<string>,
  read: (file: string) => string,
): Finding[] {
  const defined = definedIds(files.has(REQUIREMENTS_PAGE) ? read(REQUIREMENTS_PAGE) : "");
  const prefixes = new Set([...defined].map((id) => id.split("-")[0] as string));
  const findings: Finding[] = [];
  for (const file of scanned) {
    const source = read(file);
    const titles = /\.(ts|tsx)$/.test(file) ? testTitles(source) : [];
    for (const { line, text } of [...commentary(file, source), ...titles]) {
      for (const ref of mdReferences(text)) {
        if (!resolves(ref, file, files)) findings.push({ file, line, reason: `no such file: ${ref}` });
      }
      for (const id of citedIds(text, prefixes)) {
        if (!defined.has(id)) {
          findings.push({ file, line, reason: `requirement ${id} is not defined in ${REQUIREMENTS_PAGE}` });
        }
      }
      for (const tag of issueHistory(text)) {
        findings.push({
          file,
          line,
          reason: `tracker history "${tag}": say what the code does (history is in git)`,
        });
      }
    }
  }
  return findings;
}

/** The repository's files, tracked or new (not ignored), that are still on disk. */
function repositoryFiles(root: string): string[] {
  const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return listed.split("\0").filter((f) => f !== "" && !SKIPPED.test(f) && existsSync(path.join(root, f)));
}

export function main(root: string): number {
  const all = repositoryFiles(root);
  const files = new Set(all);
  const scanned = all.filter((f) => SCANNED.test(f) && ROOTS.some((r) => f === r || f.startsWith(`${r}/`)));
  const findings = check(scanned, files, (f) => readFileSync(path.join(root, f), "utf8"));
  for (const f of findings) console.error(`${f.file}:${f.line}: ${f.reason}`);
  return findings.length === 0 ? 0 : 1;
}

if (import.meta.main) process.exitCode = main(process.argv[2] ?? path.join(import.meta.dirname, ".."));
