/** One RPC over the daemon's Unix socket (used by the CLI; host clients have their own). */
import http from "node:http";
import type { SupervisorAnswer } from "./protocol.ts";

export function callSocket(
  socketPath: string,
  method: string,
  params: unknown,
  timeoutMs = 120_000,
): Promise<SupervisorAnswer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(params ?? {});
    const request = http.request(
      {
        socketPath,
        method: "POST",
        path: `/rpc/${method}`,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as SupervisorAnswer);
          } catch (error) {
            reject(error);
          }
        });
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`supervisor call ${method} timed out`)));
    request.on("error", reject);
    request.end(body);
  });
}
