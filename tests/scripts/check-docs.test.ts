/**
 * `pnpm run check:docs`: a dangling `*.md` reference in a comment or a doc, an undefined
 * requirement id, or tracker history (the word issue and a number) in a comment, a test title or
 * a doc is a finding; a path in a string, a URL and an id-like name are not.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  check,
  citedIds,
  issueHistory,
  jsComments,
  main,
  mdReferences,
  resolves,
  testTitles,
} from "../../scripts/check-docs.ts";

const FILES = new Set(["README.md", "docs/providers.md", "docs/requirements.md", "apps/api/src/a.ts"]);

describe("check:docs, its parts", () => {
  it("reads a code file's comments and not its strings", () => {
    const source = [
      'const p = "notes/todo.md"; // see docs/providers.md',
      "/* block",
      "   README.md */ const t = `a",
      "// not a comment`;",
    ].join("\n");
    expect(jsComments(source)).toEqual([
      { line: 1, text: " see docs/providers.md" },
      { line: 2, text: " block" },
      { line: 3, text: "   README.md " },
    ]);
  });

  it("finds bare names and paths, not URLs or globs", () => {
    expect(
      mdReferences("recipes.md, [x](../docs/providers.md#a), https://h/x/y.md, *.md, /docs/README.md"),
    ).toEqual(["recipes.md", "../docs/providers.md"]);
  });

  it("resolves relative to the citing file, to the root, or by bare name", () => {
    expect(resolves("../../../README.md", "apps/api/src/a.ts", FILES)).toBe(true);
    expect(resolves("docs/providers.md", "apps/api/src/a.ts", FILES)).toBe(true);
    expect(resolves("providers.md", "apps/api/src/a.ts", FILES)).toBe(true);
    expect(resolves("emulators.md", "apps/api/src/a.ts", FILES)).toBe(false);
    expect(resolves("../shared/docs/spec.md", "docs/requirements.md", FILES)).toBe(false);
  });

  it("cites ids of the page's prefixes only", () => {
    expect(citedIds("CMP-3, TEST-NET-1, SHA-256, PER-4..7", new Set(["CMP", "PER", "NET"]))).toEqual([
      "CMP-3",
      "PER-4",
    ]);
  });

  it("reads test and suite titles, modifiers included, on the line they start", () => {
    const source = [
      'describe("a suite", () => {',
      "  it.skipIf(process.env.CI !== undefined)('a (skipped) case', () => {});",
      "  test.each([1, 2])(`row %s`, () => {});",
      "  const label = \"it('not a title')\";",
      "});",
    ].join("\n");
    expect(testTitles(source)).toEqual([
      { line: 1, text: "a suite" },
      { line: 2, text: "a (skipped) case" },
      { line: 3, text: "row %s" },
    ]);
  });

  it("finds tracker history in any case, with or without #, not other numbers", () => {
    expect(issueHistory("(issue 16) Issues 14, 15; see issue #3, an issued 2 tokens, issue-12")).toEqual([
      "issue 16",
      "Issues 14",
      "issue #3",
    ]);
  });

  it("reports tracker history in a comment, a test title and a doc, not in other strings", () => {
    const text: Record<string, string> = {
      "apps/api/src/a.test.ts": [
        "// Network policy (issue 16): none by default.",
        'const reason = "issue 16";',
        'it("refuses a policy it cannot enforce (issue 16)", () => {});',
      ].join("\n"),
      "docs/providers.md": "# Providers\n## Daytona (issue 15)\n",
    };
    const reason = (tag: string) => `tracker history "${tag}": say what the code does (history is in git)`;
    expect(check(["apps/api/src/a.test.ts", "docs/providers.md"], FILES, (f) => text[f] ?? "")).toEqual([
      { file: "apps/api/src/a.test.ts", line: 1, reason: reason("issue 16") },
      { file: "apps/api/src/a.test.ts", line: 3, reason: reason("issue 16") },
      { file: "docs/providers.md", line: 2, reason: reason("issue 15") },
    ]);
  });

  it("reports file, line and reason", () => {
    const text: Record<string, string> = {
      "docs/requirements.md": "# R\n- CMP-1 One computer.\n",
      "apps/api/src/a.ts": "const x = 1;\n// CMP-1, CMP-9 (emulators.md)\n",
    };
    expect(check(["apps/api/src/a.ts"], FILES, (f) => text[f] ?? "")).toEqual([
      { file: "apps/api/src/a.ts", line: 2, reason: "no such file: emulators.md" },
      {
        file: "apps/api/src/a.ts",
        line: 2,
        reason: "requirement CMP-9 is not defined in docs/requirements.md",
      },
    ]);
  });
});

describe("check:docs on a repository", () => {
  const root = mkdtempSync(path.join(tmpdir(), "check-docs-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };

  it("passes a clean tree and fails one dangling reference", () => {
    execFileSync("git", ["init", "-q"], { cwd: root });
    write("docs/requirements.md", "- CMP-1 One computer.\n");
    write("README.md", "See docs/requirements.md.\n");
    write("packages/p/src/a.ts", "// CMP-1, as README.md says\nexport const a = 1;\n");
    write("packages/p/node_modules/x/y.ts", "// gone.md\n");
    expect(main(root)).toBe(0);
    write("scripts/b.sh", "echo hi # see gone.md\n");
    expect(main(root)).toBe(1);
  });
});
