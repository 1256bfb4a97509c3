import { request } from "node:http";

export const COMPUTER_IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";

/**
 * The OCI runtime the Docker suites make computers with: `RAKAZO_DOCKER_RUNTIME`, as the
 * deployment reads it (the test command runs the runtime-sensitive suites once more with
 * `runsc`, vitest.config.ts), else Docker's `runc`.
 */
export const DOCKER_RUNTIME = process.env.RAKAZO_DOCKER_RUNTIME ?? "runc";

function dockerGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request({ socketPath: "/var/run/docker.sock", path, timeout: 2_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve({ status: 0, body: "" }));
    req.end();
  });
}

/** Why Docker suites cannot run here, or undefined when the engine, the image and the runtime are present. */
export async function dockerUnavailable(): Promise<string | undefined> {
  if ((await dockerGet("/_ping")).status !== 200)
    return "no Docker engine (scripts/docker-engine.sh starts one)";
  if ((await dockerGet(`/images/${encodeURIComponent(COMPUTER_IMAGE)}/json`)).status !== 200) {
    return `image ${COMPUTER_IMAGE} missing (infra/sandboxes/image/build.sh builds it)`;
  }
  if (DOCKER_RUNTIME !== "runc") {
    const info = JSON.parse((await dockerGet("/info")).body || "{}") as {
      Runtimes?: Record<string, unknown>;
    };
    if (!info.Runtimes?.[DOCKER_RUNTIME]) {
      return `the engine has no runtime ${DOCKER_RUNTIME} (scripts/docker-engine.sh registers runsc when it is installed)`;
    }
  }
  return undefined;
}
