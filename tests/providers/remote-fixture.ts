/**
 * What the Boat and Daytona adapter suites share: the supervisor bundle as the image build
 * stages it (the runtime installs these bytes into every machine, CMP-8) and a machine pool of
 * the computer image labelled with the suite's owner.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BUILD_SH = resolve(import.meta.dirname, "../../infra/sandboxes/image/build.sh");

let bundle: Uint8Array | undefined;

/** The bundled supervisor, built once per process by `build.sh --stage-supervisor`. */
export function supervisorBundle(): Promise<Uint8Array> {
  if (!bundle) {
    const dir = mkdtempSync(join(tmpdir(), "rakazo-i15-bundle-"));
    try {
      execFileSync("bash", [BUILD_SH, "--stage-supervisor", dir], { stdio: ["ignore", "ignore", "pipe"] });
      bundle = new Uint8Array(readFileSync(join(dir, "supervisor.mjs")));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return Promise.resolve(bundle);
}
