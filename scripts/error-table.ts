// Regenerates the README's error table from apps/api/src/http-errors.ts (the one code→status
// map). `node scripts/error-table.ts --check` exits 1 when the README is out of date.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { withErrorTable } from "@rakazo/api/error-table";

const path = join(import.meta.dirname, "../README.md");
const readme = await readFile(path, "utf8");
const updated = withErrorTable(readme);
if (process.argv.includes("--check")) {
  if (updated !== readme) {
    console.error("README error table is out of date: run node scripts/error-table.ts");
    process.exit(1);
  }
} else if (updated !== readme) {
  await writeFile(path, updated);
  console.log("README error table updated");
}
