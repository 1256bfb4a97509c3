// A client nobody here wrote, generated from GET /openapi.json: openapi-typescript turns the
// document into types (in a temp dir), `tsc` shows what they promise (a required body left out
// does not compile), and openapi-fetch makes every contract's example call against the real
// API (real Postgres, a running computer). Every answer must be one the document lists for that
// operation: a 2xx that validates against its schema, or a status and code of its own list.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { Ajv2020 } from "ajv/dist/2020.js";
import createClient from "openapi-fetch";
import openapiTS, { astToString } from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleIds, exampleFor, MISSING_IDS } from "../support/rpc-examples.ts";
import { createTestSystem, runningComputer, type TestSystem } from "../support/system.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const EXTERNAL_TOKEN = `ext-${"k".repeat(40)}`;

let system: TestSystem;
let doc: any;
let dir: string;

beforeAll(async () => {
  system = await createTestSystem({ externalToken: EXTERNAL_TOKEN });
  const res = await system.app.request("/openapi.json");
  expect(res.status).toBe(200);
  doc = await res.json();
  dir = await mkdtemp(path.join(tmpdir(), "rakazo-openapi-client-"));
  await writeFile(path.join(dir, "schema.d.ts"), astToString(await openapiTS(doc, { silent: true })));
}, 60_000);
afterAll(async () => {
  await system.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a client generated from the OpenAPI document", () => {
  it("types a required body as required (tsc on the generated types)", async () => {
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    await writeFile(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2024",
          lib: ["ES2024", "DOM"],
          types: [],
          skipLibCheck: true,
          paths: { "openapi-fetch": [path.join(ROOT, "node_modules/openapi-fetch/dist/index.d.mts")] },
        },
        files: ["check.ts"],
      }),
    );
    await writeFile(
      path.join(dir, "check.ts"),
      `import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

const rakazo = createClient<paths>({ baseUrl: "http://127.0.0.1:8787" });
export async function calls(): Promise<void> {
  const got = await rakazo.POST("/rpc/computer/get", { body: { computerId: "cmp_x" } });
  const state: string | undefined = got.data?.result.state;
  void state;
  // {} is a valid input: the body may be left out.
  await rakazo.POST("/rpc/token/revoke", {});
  await rakazo.POST("/rpc/space/list", {});
  // @ts-expect-error computer/get's body is required
  await rakazo.POST("/rpc/computer/get", {});
  // @ts-expect-error files/write's body is required
  await rakazo.POST("/rpc/computer/files/write", {});
  // @ts-expect-error a body of the wrong shape
  await rakazo.POST("/rpc/computer/get", { body: { computerId: 7 } });
}
`,
    );
    const tsc = spawnSync(path.join(ROOT, "node_modules/.bin/tsc"), ["-p", path.join(dir, "tsconfig.json")], {
      encoding: "utf8",
    });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe("");
    expect(tsc.status).toBe(0);
  }, 60_000);

  it("makes every contract's example call and gets an answer the document lists", async () => {
    await system.startWorker();
    const alice = await system.newTenant("alice");
    const computerId = await runningComputer(system, alice);
    const spare = await system.client(alice.token).call("token/create", { name: "spare" });
    const ids: ExampleIds = {
      ...MISSING_IDS,
      spaceId: alice.spaceId,
      computerId,
      botId: alice.botId,
      tokenId: spare.id,
    };
    const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });
    const client = createClient<any>({
      baseUrl: "http://localhost",
      fetch: async (request) => system.app.fetch(request),
    });
    // What ends or removes something the later calls use goes last.
    const LAST = ["computer/delete", "external/computer/destroy", "token/revoke"];
    const order = [
      ...RPC_CONTRACTS.filter((c) => !LAST.includes(c.name)),
      ...LAST.map((name) => RPC_CONTRACTS.find((c) => c.name === name)).filter((c) => c !== undefined),
    ];
    expect(order).toHaveLength(RPC_CONTRACTS.length);
    const seen: string[] = [];
    for (const contract of order) {
      const token = { token: alice.token, external: EXTERNAL_TOKEN, bootstrap: undefined, invite: undefined }[
        contract.auth
      ];
      const answer = await client.POST(`/rpc/${contract.name}`, {
        body: exampleFor(contract.name, ids),
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
      const status = String(answer.response.status);
      const listed = doc.paths[`/rpc/${contract.name}`].post.responses[status];
      const body = answer.data ?? answer.error;
      expect(listed, `${contract.name} answered ${status} ${JSON.stringify(body)}`).toBeDefined();
      const validate = ajv.compile(listed.content["application/json"].schema);
      expect(validate(body), `${contract.name} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      seen.push(`${contract.name} ${status}${answer.error ? ` ${answer.error.error.code}` : ""}`);
    }
    // The calls reached real work, not only refusals.
    expect(seen.filter((line) => line.endsWith(" 200")).length, seen.join("\n")).toBeGreaterThanOrEqual(20);
    expect(seen).toContain("computer/get 200");
    expect(seen).toContain("external/computer/create 200");
  }, 120_000);
});
