import { request } from "node:http";

export const COMPUTER_IMAGE = process.env.RAKAZO_COMPUTER_IMAGE ?? "rakazo-computer:latest";

function dockerStatus(path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ socketPath: "/var/run/docker.sock", path, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

/** Why Docker suites cannot run here, or undefined when the engine and the image are present. */
export async function dockerUnavailable(): Promise<string | undefined> {
  if ((await dockerStatus("/_ping")) !== 200) return "no Docker engine (scripts/docker-engine.sh starts one)";
  if ((await dockerStatus(`/images/${encodeURIComponent(COMPUTER_IMAGE)}/json`)) !== 200) {
    return `image ${COMPUTER_IMAGE} missing (infra/sandboxes/image/build.sh builds it)`;
  }
  return undefined;
}
