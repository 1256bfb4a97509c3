/**
 * Decides `RAKAZO_PROVIDER=auto`: Docker when its engine answers on the socket and the
 * computer image is present, otherwise the fake provider. Plain HTTP over the socket keeps the
 * launcher free of the Docker SDK.
 */
import { request } from "node:http";

function dockerGet(socketPath: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method: "GET", timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

export async function dockerReady(
  socketPath: string,
  image: string,
): Promise<{ ready: boolean; reason: string }> {
  if ((await dockerGet(socketPath, "/_ping")) !== 200) {
    return { ready: false, reason: `no Docker engine answers on ${socketPath}` };
  }
  if ((await dockerGet(socketPath, `/images/${encodeURIComponent(image)}/json`)) !== 200) {
    return {
      ready: false,
      reason: `image ${image} is not present (build it: infra/sandboxes/image/build.sh)`,
    };
  }
  return { ready: true, reason: "Docker engine and computer image present" };
}
