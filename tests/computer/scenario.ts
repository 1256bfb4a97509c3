/**
 * VER-3's scenario, shared by `pnpm test:computer` (a real E2B desktop and a real model) and its
 * offline twin (the E2B emulator and a scripted Pi model; tests/computer/ver3.docker.test.ts):
 * 1. a computer is created through the API and a deterministic page is served INSIDE it;
 * 2. an agent run (the worker's Pi session) opens the page, looks at the screen, clicks the
 *    button with the mouse — the page's server records a marker — then reads the marker with
 *    the shell and writes it to a file with the file tools;
 * 3. the script checks the server-side marker (one click) and the file;
 * 4. once the run's end has saved the workspace (PER-2), the machine is destroyed behind the
 *    control plane's back under the running computer; `computer/stop` has nothing to save and
 *    stops; `computer/start` finds the stale providerRef missing, boots a replacement (PRV-3)
 *    and restores the checkpoint: the model's file is back, byte for byte, on a new machine.
 * Every step throws a clear error naming itself; the caller prints the step timings.
 */
import { randomBytes } from "node:crypto";
import type { FauxProviderRegistration } from "@mariozechner/pi-ai";
import { activityEvents, computers, runs } from "@rakazo/db";
import { asc, eq } from "drizzle-orm";
import type { TestSystem } from "../support/system.ts";
import { scriptedComputerUser } from "./scripted-model.ts";

export const PAGE_PORT = 18_790;
export const PAGE_URL = `http://127.0.0.1:${PAGE_PORT}/`;
/** Where the page's server keeps its marker: outside the workspace, so only the machine has it. */
export const MARKER_DIR = "/tmp/rakazo-ver3";
export const PROOF_PATH = "ver3/proof.txt";

export const TASK = [
  `Open ${PAGE_URL} in your browser (browser_navigate).`,
  "Then take a screenshot of your screen (computer_observe) and click the big pink button labelled",
  '"Create marker" with the mouse (computer_act, a click at the button\'s screen coordinates).',
  `Then run \`cat ${MARKER_DIR}/marker.txt\` in the shell (the shell tool) and write exactly what it`,
  `printed into the file ${PROOF_PATH} with write_file. Then answer "done".`,
].join(" ");

/** The page and its server; the button's click (a trusted input event) POSTs the marker. */
export function pageServer(): string {
  const page = `<!doctype html><title>VER-3</title><style>
html,body{margin:0;height:100%;background:#fff;font:20px sans-serif}
#go{position:fixed;left:50%;top:50%;width:360px;height:180px;margin:-90px 0 0 -180px;
background:#ff00ff;color:#fff;border:0;border-radius:0;font-size:30px;outline:none}
#go.done{background:#00a000}</style>
<button id="go">Create marker</button>
<script>document.getElementById("go").addEventListener("click", async (event) => {
  if (!event.isTrusted) return;
  const answer = await fetch("/marker", { method: "POST" });
  if (answer.ok) { event.target.className = "done"; event.target.textContent = "Marker created"; }
});</script>`;
  return `import http from "node:http";
import fs from "node:fs";
const [port, nonce, dir] = process.argv.slice(2);
const page = ${JSON.stringify(page)};
http.createServer((req, res) => {
  fs.appendFileSync(dir + "/requests.log", req.method + " " + req.url + "\\n");
  if (req.method === "POST" && req.url === "/marker") {
    fs.appendFileSync(dir + "/marker.txt", "marker " + nonce + "\\n");
    res.writeHead(204).end();
    return;
  }
  res.writeHead(200, { "content-type": "text/html" }).end(page);
}).listen(Number(port), "127.0.0.1");
`;
}

export interface ScenarioEnvironment {
  /** What runs the computers and the model, for the report. */
  readonly name: string;
  /** API and a worker hosting agent runs, on the provider under test. */
  readonly system: TestSystem;
  /** The offline twin's scripted model (the worker's agent runs it); absent for a real model. */
  readonly scripted?: FauxProviderRegistration;
  /** Destroys the machine behind the control plane's back (the emulator's kill, the cloud's kill). */
  destroyMachine(ref: string): Promise<void>;
  /** Multiplies the waits (a real cloud and a real model are slower). */
  readonly patience: number;
}

export interface ScenarioStep {
  readonly name: string;
  readonly ms: number;
}

export interface ScenarioResult {
  readonly steps: readonly ScenarioStep[];
  /** The mutating tools the run used, in order (activity events). */
  readonly tools: readonly string[];
  readonly proof: string;
  /** How many markers the page's server recorded (one per click; a real model may click twice). */
  readonly markers: number;
  readonly refs: { readonly first: string; readonly replacement: string };
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1_000)} s`);
    await new Promise((done) => setTimeout(done, 250));
  }
}

export async function runComputerScenario(
  env: ScenarioEnvironment,
  progress: (line: string) => void = () => {},
): Promise<ScenarioResult> {
  const { system } = env;
  const wait = (ms: number) => ms * env.patience;
  const steps: ScenarioStep[] = [];
  const step = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    progress(`… ${name}`);
    try {
      return await body();
    } catch (error) {
      throw new Error(`VER-3 step "${name}" failed: ${(error as Error).message}`, { cause: error });
    } finally {
      steps.push({ name, ms: Math.round(performance.now() - started) });
    }
  };
  const tenant = await system.newTenant("ver3");
  const client = system.client(tenant.token);
  const row = async (computerId: string) =>
    (await system.ctx.db.select().from(computers).where(eq(computers.id, computerId)))[0];
  const stateIs = (computerId: string, state: string) => async () =>
    (await row(computerId))?.state === state ? true : undefined;
  const nonce = randomBytes(6).toString("hex");
  const proofPath = `bots/${tenant.botId}/${PROOF_PATH}`;
  let markers = 0;

  const computerId = await step("create a computer", async () => {
    const { id } = await client.call("computer/create", { spaceId: tenant.spaceId });
    await until("the computer running", wait(120_000), stateIs(id, "running"));
    return id;
  });
  try {
    const first = (await row(computerId))?.providerRef as string;
    const sandbox = system.provider.sandbox(first);
    const sh = (script: string) => sandbox.exec({ argv: ["sh", "-c", script], timeoutMs: 20_000 });

    await step("serve the page inside the computer", async () => {
      const code = Buffer.from(pageServer()).toString("base64");
      const started = await sh(
        `mkdir -p ${MARKER_DIR} && echo ${code} | base64 -d > ${MARKER_DIR}/server.mjs && ` +
          `setsid -f node ${MARKER_DIR}/server.mjs ${PAGE_PORT} ${nonce} ${MARKER_DIR} ` +
          `>${MARKER_DIR}/server.log 2>&1 </dev/null`,
      );
      if (started.exitCode !== 0) throw new Error(`start exited ${started.exitCode}: ${started.stderr}`);
      const probe = `fetch(${JSON.stringify(PAGE_URL)}).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
      await until("the page answering", wait(15_000), async () =>
        (await sandbox.exec({ argv: ["node", "-e", probe], timeoutMs: 5_000 })).exitCode === 0
          ? true
          : undefined,
      );
    });

    const runId = await step("agent run: observe, click, shell, write a file", async () => {
      env.scripted?.setResponses(scriptedComputerUser({ url: PAGE_URL, proofPath: PROOF_PATH }));
      const started = await system.rpc(
        "agent/run",
        { computerId, botId: tenant.botId, task: TASK },
        tenant.token,
      );
      if (started.status !== 200) throw new Error(`agent/run answered ${JSON.stringify(started.json)}`);
      const id = started.json.result.id as string;
      const ended = await until("the run ending", wait(180_000), async () => {
        const [run] = await system.ctx.db.select().from(runs).where(eq(runs.id, id));
        return run?.status === "completed" || run?.status === "failed" ? run : undefined;
      });
      if (ended.status !== "completed") throw new Error(`the run ${ended.status}: ${ended.error}`);
      return id;
    });

    const tools = await step("check the server-side marker", async () => {
      const marker = await sh(`cat ${MARKER_DIR}/marker.txt 2>/dev/null || true`);
      const lines = marker.stdout.split("\n").filter(Boolean);
      if (lines.length === 0 || lines.some((line) => line !== `marker ${nonce}`))
        throw new Error(
          `expected the click's marker, the page's server recorded ${JSON.stringify(marker.stdout)}`,
        );
      markers = lines.length;
      const events = await system.ctx.db
        .select()
        .from(activityEvents)
        .where(eq(activityEvents.runId, runId))
        .orderBy(asc(activityEvents.createdAt));
      const used = events.map((e) => String(e.payload.tool));
      const order = ["computer_act", "shell", "write_file"].map((tool) => used.indexOf(tool));
      if (order.some((at) => at < 0) || order.some((at, i) => i > 0 && at < (order[i - 1] as number)))
        throw new Error(
          `expected computer_act, shell, write_file in that order; the run used ${used.join(", ")}`,
        );
      return used;
    });

    const proof = await step("read the model's file", async () => {
      const file = await client.call("computer/files/read", { computerId, path: proofPath });
      if (file.source !== "live" || !file.text?.includes(`marker ${nonce}`))
        throw new Error(`${proofPath} holds ${JSON.stringify(file)}`);
      return file.text;
    });

    await step("destroy the machine under the running computer", async () => {
      // The run's end saved the workspace (PER-2); that checkpoint is what must come back.
      await until("the run's checkpoint", wait(60_000), async () =>
        ((await row(computerId))?.homeRevision ?? 0) >= 1 ? true : undefined,
      );
      await env.destroyMachine(first);
      const status = await system.provider.status(first);
      if (status !== "missing") throw new Error(`the destroyed machine is ${status}, not missing`);
      // Nothing is left to save: the stop keeps the run's checkpoint and stops.
      await client.call("computer/stop", { computerId });
      await until("the computer stopped", wait(60_000), stateIs(computerId, "stopped"));
    });

    const replacement = await step("start: a replacement boots through the stale providerRef", async () => {
      await client.call("computer/start", { computerId });
      await until("the computer running again", wait(120_000), stateIs(computerId, "running"));
      const ref = (await row(computerId))?.providerRef as string;
      if (!ref || ref === first) throw new Error(`expected a new machine, the ref is ${ref}`);
      return ref;
    });

    await step("the checkpoint restored the model's file", async () => {
      const file = await client.call("computer/files/read", { computerId, path: proofPath });
      if (file.source !== "live" || file.text !== proof)
        throw new Error(`after the replacement ${proofPath} holds ${JSON.stringify(file)}`);
      // A new machine: what lived only on the destroyed one is not there.
      const fresh = await system.provider
        .sandbox(replacement)
        .exec({ argv: ["sh", "-c", `test ! -e ${MARKER_DIR}/marker.txt`] });
      if (fresh.exitCode !== 0) throw new Error("the replacement still has the old machine's /tmp");
    });
    return { steps, tools, proof, markers, refs: { first, replacement } };
  } finally {
    await step("delete the computer", async () => {
      await client.call("computer/delete", { computerId });
      await until("the computer deleted", wait(60_000), stateIs(computerId, "deleted"));
    }).catch((error: unknown) => progress(`(cleanup) ${(error as Error).message}`));
  }
}
