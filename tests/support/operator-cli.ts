/**
 * `./rakazo <args>` (apps/launcher/src/cli.ts) as an operator runs it on the server, against a
 * test system's database and data folder, with nothing else of this process's environment.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import type { TestSystem } from "./system.ts";

const CLI = join(import.meta.dirname, "../../apps/launcher/src/cli.ts");

export function operatorCli(
  system: TestSystem,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/root",
          DATABASE_URL: system.database.url,
          DATA_DIR: system.dataDir,
        },
      },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
