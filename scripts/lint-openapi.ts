/**
 * `pnpm run lint:openapi` (part of `pnpm lint`): the document `GET /openapi.json` serves,
 * built in-process from the contracts (no server), linted by Redocly's `recommended` rules.
 * Any error fails; warnings are printed. Redocly's telemetry and update check are off: lint
 * reaches nothing outside this machine.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildOpenApiDocument } from "@rakazo/api/openapi";
import { RPC_CONTRACTS } from "@rakazo/api-contract";

const redocly = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");
const dir = mkdtempSync(path.join(tmpdir(), "rakazo-openapi-"));
try {
  const file = path.join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(buildOpenApiDocument(RPC_CONTRACTS), null, 2));
  const run = spawnSync(
    process.execPath,
    [redocly, "lint", "--extends", "recommended", "--format", "stylish", file],
    {
      cwd: dir, // no redocly.yaml of anyone's in reach: the recommended rules alone
      stdio: "inherit",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  );
  if (run.error) throw run.error;
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
