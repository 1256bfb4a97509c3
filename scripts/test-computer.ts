/**
 * VER-3: the opt-in acceptance run with a real model and a real E2B desktop.
 *
 *   COMPUTER_E2E_MODEL=<vision-model-id> pnpm test:computer
 *   pnpm test:computer --offline     # the offline twin: E2B emulator + scripted Pi model
 *
 * The real run needs E2B_API_KEY, OPENROUTER_API_KEY and COMPUTER_E2E_MODEL (E2B_TEMPLATE picks
 * the desktop template, default `desktop`); without them it stops at once, non-zero (2), naming
 * each missing key. Both runs need Docker (the twin's sandboxes; a temporary Postgres when none
 * answers at TEST_DATABASE_URL or 127.0.0.1:5432) and play the same scenario
 * (tests/computer/scenario.ts), which CI runs as tests/computer/ver3.docker.test.ts. Exit 0: the
 * scenario passed; 1: a step failed (named, with the control plane's last log lines); 2: it
 * could not start. Not part of `pnpm test`.
 */
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import postgres from "postgres";
import type { RunningEnvironment } from "../tests/computer/environments.ts";

const REQUIRED = [
  [
    "COMPUTER_E2E_MODEL",
    "the OpenRouter id of a vision model, e.g. COMPUTER_E2E_MODEL=anthropic/claude-sonnet-4",
  ],
  ["E2B_API_KEY", "an E2B API key (the run boots a real E2B desktop)"],
  ["OPENROUTER_API_KEY", "an OpenRouter API key (the run calls a real model)"],
] as const;
const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";
const LABELS = { "rakazo-test.suite": "test-computer", "rakazo-test.pid": String(process.pid) };

function cannotStart(message: string): never {
  process.stderr.write(`test:computer cannot start. ${message}\n`);
  process.exit(2);
}

const { values } = parseArgs({ options: { offline: { type: "boolean", default: false } } });

if (!values.offline) {
  const missing = REQUIRED.filter(([name]) => !process.env[name]?.trim());
  if (missing.length > 0) {
    cannotStart(
      `It is an opt-in acceptance run. Missing:\n${missing
        .map(([name, what]) => `  - ${name}: ${what}`)
        .join("\n")}\n(\`pnpm test:computer --offline\` runs the offline twin without keys.)`,
    );
  }
}
// Loaded only once the keys are there: the missing-key answer is immediate.
const { dockerUnavailable } = await import("@rakazo/sandbox/testing");
const { offlineTwin, realE2B } = await import("../tests/computer/environments.ts");
const { runComputerScenario } = await import("../tests/computer/scenario.ts");
const unavailable = await dockerUnavailable();
if (unavailable) cannotStart(`It needs Docker: ${unavailable}.`);

async function answers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** A Postgres to make the run's database in: the configured one, or a temporary container. */
async function ensurePostgres(): Promise<() => void> {
  const configured = process.env.TEST_DATABASE_URL ?? DEFAULT_ADMIN_URL;
  if (await answers(configured)) {
    process.env.TEST_DATABASE_URL = configured;
    return () => {};
  }
  const labels = Object.entries(LABELS).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
  const id = execFileSync(
    "docker",
    [
      ...["run", "-d", "--rm", ...labels, "-e", "POSTGRES_HOST_AUTH_METHOD=trust"],
      ...["-p", "127.0.0.1::5432", process.env.TEST_COMPUTER_POSTGRES_IMAGE ?? "postgres:17-alpine"],
    ],
    { encoding: "utf8" },
  ).trim();
  const remove = () => void execFileSync("docker", ["rm", "-f", id], { stdio: "ignore" });
  const port = execFileSync("docker", ["port", id, "5432/tcp"], { encoding: "utf8" }).trim().split(":").pop();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 60_000;
  while (!(await answers(url))) {
    if (Date.now() > deadline) {
      remove();
      cannotStart("the temporary Postgres container did not answer within 60 s.");
    }
    await new Promise((done) => setTimeout(done, 500));
  }
  process.env.TEST_DATABASE_URL = url;
  return remove;
}

const dropPostgres = await ensurePostgres();
let env: RunningEnvironment | undefined;
let code = 1;
const started = performance.now();
try {
  env = values.offline
    ? await offlineTwin({ labels: LABELS })
    : await realE2B({
        e2bApiKey: process.env.E2B_API_KEY as string,
        openRouterApiKey: process.env.OPENROUTER_API_KEY as string,
        model: process.env.COMPUTER_E2E_MODEL as string,
        ...(process.env.E2B_TEMPLATE ? { template: process.env.E2B_TEMPLATE } : {}),
      });
  console.log(`VER-3 on ${env.name}`);
  const result = await runComputerScenario(env, (line) => console.log(line));
  for (const step of result.steps) console.log(`  ${step.name.padEnd(56)} ${String(step.ms).padStart(7)} ms`);
  console.log(`  tools used: ${result.tools.join(", ")}`);
  console.log(`VER-3 passed in ${Math.round((performance.now() - started) / 1_000)} s`);
  code = 0;
} catch (error) {
  console.error(`VER-3 failed: ${(error as Error).message}`);
  // The control plane's own lines (redacted by its logger: no key reaches them).
  if (env) console.error(`last log lines:\n${env.system.logLines.slice(-30).join("\n")}`);
} finally {
  await env?.close().catch((error: unknown) => console.error(`cleanup: ${(error as Error).message}`));
  dropPostgres();
}
process.exit(code);
