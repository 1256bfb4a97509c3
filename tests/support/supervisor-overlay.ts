/**
 * The computer image with this checkout's supervisor bundle laid over it, so Docker suites test
 * the supervisor they sit beside even before `infra/sandboxes/image/build.sh` has rebuilt the
 * image (a one-layer `docker build`, about a second). The bundle is staged by build.sh itself
 * (`--stage-supervisor`): the overlay ships exactly what the image build ships.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BUILD_SH = fileURLToPath(new URL("../../infra/sandboxes/image/build.sh", import.meta.url));

export function buildSupervisorOverlay(baseImage: string): { image: string; remove(): void } {
  const image = `rakazo-computer-overlay:${createHash("sha256").update(baseImage).digest("hex").slice(0, 8)}-${randomBytes(3).toString("hex")}`;
  const context = mkdtempSync(path.join(tmpdir(), "rakazo-overlay-"));
  try {
    execFileSync("bash", [BUILD_SH, "--stage-supervisor", context], { stdio: ["ignore", "ignore", "pipe"] });
    const dockerfile = [
      `FROM ${baseImage}`,
      "COPY supervisor.mjs /opt/rakazo/supervisor.mjs",
      // An image built before the bundle still names the old entry point.
      'CMD ["node","/opt/rakazo/supervisor.mjs","serve"]',
      "",
    ].join("\n");
    execFileSync("docker", ["build", "-q", "-t", image, "-f", "-", context], {
      input: dockerfile,
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
      stdio: ["pipe", "ignore", "pipe"],
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return {
    image,
    remove: () => {
      try {
        execFileSync("docker", ["rmi", "-f", image], { stdio: "ignore" });
      } catch {
        // Best effort: a leftover tag holds no container and no resources.
      }
    },
  };
}
