/**
 * The computer image with this checkout's supervisor sources laid over it, so Docker suites
 * test the supervisor they sit beside even before `infra/sandboxes/image/build.sh` has rebuilt
 * the image (a one-layer `docker build`, about a second).
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

const SUPERVISOR_DIR = fileURLToPath(new URL("../../infra/sandboxes/supervisor", import.meta.url));

export function buildSupervisorOverlay(baseImage: string): { image: string; remove(): void } {
  const image = `rakazo-computer-overlay:${createHash("sha256").update(baseImage).digest("hex").slice(0, 8)}-${randomBytes(3).toString("hex")}`;
  const dockerfile = [
    `FROM ${baseImage}`,
    "COPY package.json /opt/rakazo/supervisor/package.json",
    "COPY src /opt/rakazo/supervisor/src",
    "",
  ].join("\n");
  execFileSync("docker", ["build", "-q", "-t", image, "-f", "-", SUPERVISOR_DIR], {
    input: dockerfile,
    env: { ...process.env, DOCKER_BUILDKIT: "0" },
    stdio: ["pipe", "ignore", "pipe"],
  });
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
