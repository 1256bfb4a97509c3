// The bridge's body limit for a caller that holds a token, through the real bridge (a child
// process) in front of the real API on the fake provider: a body within 8 MiB runs its tool
// whether its length is declared or it comes chunked, and one over it is 413 BODY_TOO_LARGE
// either way — from the header when declared, counted as read when chunked.
import http from "node:http";
import { describe, expect, it } from "vitest";
import { useBridgeStack } from "./bridge-stack.ts";

const bridge = useBridgeStack("bridge-body-limit");
const MiB = 1024 * 1024;

/** POST /v1/<tool> with alpha's token: `body` sent whole with its length, or in 64 KiB chunks. */
function post(tool: string, body: string, framing: "declared" | "chunked") {
  return new Promise<{ status: number; json: any }>((resolve, reject) => {
    const request = http.request(`${bridge.stack().bridgeUrl()}/v1/${tool}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${bridge.token("alpha")}`,
        ...(framing === "declared" ? { "content-length": Buffer.byteLength(body) } : {}),
      },
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
    // The bridge may answer and close before the whole body is sent: only a missing answer fails.
    request.on("error", (error) => setTimeout(() => reject(error), 1_000));
    if (framing === "declared") request.end(body);
    else {
      for (let at = 0; at < body.length; at += 64 * 1024) request.write(body.slice(at, at + 64 * 1024));
      request.end();
    }
  });
}

describe("the bridge's body limit for an authenticated caller", () => {
  it("runs a tool whose body is within the limit, declared or chunked", async () => {
    for (const framing of ["declared", "chunked"] as const) {
      const scope = { conversationId: `body-limit-${framing}` };
      const made = await post("computer_create", JSON.stringify({ scope }), framing);
      expect(made.status, JSON.stringify(made.json)).toBe(200);
      expect(made.json.result.computerId).toMatch(/^cmp_/);
    }
  });

  it("answers 413 BODY_TOO_LARGE for a body over 8 MiB, declared or chunked", async () => {
    const content = "x".repeat(9 * MiB);
    const body = JSON.stringify({
      computerId: "cmp_x",
      capability: "rcap_x",
      op: "write",
      path: "a",
      content,
    });
    for (const framing of ["declared", "chunked"] as const) {
      const refused = await post("file", body, framing);
      expect(refused.status, framing).toBe(413);
      expect(refused.json.error.code, framing).toBe("BODY_TOO_LARGE");
    }
  });
});
