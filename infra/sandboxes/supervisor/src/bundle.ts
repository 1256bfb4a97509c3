/**
 * Builds the supervisor as one file, `supervisor.mjs`: the only supervisor file the computer
 * image ships (infra/sandboxes/image). Everything it imports from the workspace (protocol,
 * page-helper, zod) is inlined; only `node:` builtins stay imports, so the computer needs
 * nothing but Node (bundle.test.ts checks this on the output).
 *
 *   node infra/sandboxes/supervisor/src/bundle.ts <out-file>
 *
 * Deterministic: paths in the output are relative to the repository root, so the same sources
 * give the same bytes in any checkout (the image's content hash is taken over them).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
export const SUPERVISOR_ENTRY = "infra/sandboxes/supervisor/src/daemon/entry.ts";

export interface SupervisorBundle {
  readonly text: string;
  readonly metafile: Metafile;
}

export async function bundleSupervisor(): Promise<SupervisorBundle> {
  const result = await build({
    absWorkingDir: REPO,
    entryPoints: [SUPERVISOR_ENTRY],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    // Builtins without the `node:` prefix would also be left external; the test refuses them.
    external: ["node:*"],
    minify: false,
    legalComments: "none",
    charset: "utf8",
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error("esbuild produced no output");
  return { text: file.text, metafile: result.metafile };
}

if (import.meta.main) {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node bundle.ts <out-file>");
    process.exit(2);
  }
  const { text } = await bundleSupervisor();
  mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  writeFileSync(out, text);
  console.error(`bundle.ts: ${path.resolve(out)} (${Math.round(text.length / 1024)} KiB)`);
}
