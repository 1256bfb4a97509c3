// The client over a caller's own `post` (the bridge's node:http transport): the same URL,
// headers and JSON body as over fetch, and the same results and errors from the answer.
import { describe, expect, it } from "vitest";
import { createClient, RakazoApiError, type RpcPost } from "./index.ts";

function recording(answer: { status: number; body: string }) {
  const sent: { url: string; headers: Readonly<Record<string, string>>; body: string }[] = [];
  const post: RpcPost = async (url, headers, body) => {
    sent.push({ url, headers, body });
    return answer;
  };
  return { sent, post };
}

describe("createClient with post", () => {
  it("posts the RPC's URL, bearer header and JSON body, and returns the result", async () => {
    const { sent, post } = recording({ status: 200, body: JSON.stringify({ result: [{ id: "s1" }] }) });
    const client = createClient({ baseUrl: "http://127.0.0.1:8787/", token: "rkz_x", post });
    expect(await client.call("space/list", {})).toEqual([{ id: "s1" }]);
    expect(sent).toEqual([
      {
        url: "http://127.0.0.1:8787/rpc/space/list",
        headers: { "content-type": "application/json", authorization: "Bearer rkz_x" },
        body: "{}",
      },
    ]);
  });

  it("turns a refusal into a RakazoApiError with its status, code and details", async () => {
    const refusal = { error: { code: "INVALID_INPUT", message: "bad", details: { issues: [] } } };
    const { post } = recording({ status: 400, body: JSON.stringify(refusal) });
    const error = await createClient({ baseUrl: "http://x", post })
      .call("space/list", {})
      .catch((e) => e);
    expect(error).toBeInstanceOf(RakazoApiError);
    expect(error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      message: "bad",
      details: { issues: [] },
    });
  });

  it("answers INVALID_RESPONSE for a body that is not JSON or has no result", async () => {
    const notJson = await createClient({
      baseUrl: "http://x",
      post: recording({ status: 502, body: "<html>" }).post,
    })
      .call("space/list", {})
      .catch((e) => e);
    expect(notJson).toMatchObject({ status: 502, code: "INVALID_RESPONSE" });
    const noResult = await createClient({
      baseUrl: "http://x",
      post: recording({ status: 200, body: "{}" }).post,
    })
      .call("space/list", {})
      .catch((e) => e);
    expect(noResult).toMatchObject({ status: 200, code: "INVALID_RESPONSE" });
  });
});
