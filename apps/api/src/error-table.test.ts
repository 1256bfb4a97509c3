import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { APP_ERROR_CODES } from "@rakazo/services";
import { describe, expect, it } from "vitest";
import { renderErrorTable, withErrorTable } from "./error-table.ts";
import { HTTP_STATUS } from "./http-errors.ts";

const readmePath = join(import.meta.dirname, "../../../README.md");

describe("the README's error table", () => {
  it("is the one generated from the code→status map (run node scripts/error-table.ts)", async () => {
    const readme = await readFile(readmePath, "utf8");
    expect(withErrorTable(readme)).toBe(readme);
  });

  it("lists every code the API returns with its status", async () => {
    const readme = await readFile(readmePath, "utf8");
    for (const code of APP_ERROR_CODES) {
      expect(readme).toContain(`| \`${code}\` | ${HTTP_STATUS[code]} |`);
    }
    expect(renderErrorTable().split("\n")).toHaveLength(APP_ERROR_CODES.length + 2);
  });
});
