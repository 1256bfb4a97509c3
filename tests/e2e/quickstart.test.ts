// The README's promise: `./rakazo start` needs no environment (embedded Postgres, fake
// provider), and the curl walkthrough works as written. This starts the real launcher (which
// spawns the real API and worker processes) and runs the README's own walkthrough block.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const run = promisify(execFile);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** The fenced block that follows `<!-- walkthrough -->` in the README. */
async function readmeWalkthrough(): Promise<string> {
  const readme = await readFile(join(root, "README.md"), "utf8");
  const match = /<!-- walkthrough -->\s*```(?:bash|sh)\n([\s\S]*?)```/.exec(readme);
  if (!match?.[1]) throw new Error("README has no walkthrough block");
  return match[1];
}

let launcher: ChildProcess;
let dataDir: string;
let api: string;
let web: string;
const output: string[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "rakazo-quickstart-"));
  // The embedded Postgres runs as the `postgres` user when we are root: it must reach the dir.
  await chmod(dataDir, 0o755);
  const port = await freePort();
  const webPort = await freePort();
  api = `http://127.0.0.1:${port}`;
  web = `http://127.0.0.1:${webPort}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/root",
    DATA_DIR: dataDir,
    API_PORT: String(port),
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    WEB_PORT: String(webPort),
    // Docker may be running on this machine; the walkthrough is about the fake provider.
    RAKAZO_PROVIDER: "fake",
  };
  launcher = spawn(process.execPath, [join(root, "apps/launcher/src/main.ts")], { env, stdio: "pipe" });
  launcher.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  launcher.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = (url: string) =>
      fetch(url).then(
        (r) => r.ok,
        () => false,
      );
    const workerUp = output.join("").includes('"msg":"worker.started"');
    if (workerUp && (await up(`${api}/health`)) && (await up(`${web}/health`))) break;
    if (launcher.exitCode !== null || Date.now() > deadline) {
      throw new Error(`launcher did not come up:\n${output.join("")}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}, 90_000);

afterAll(async () => {
  if (launcher && launcher.exitCode === null) {
    const exited = new Promise((done) => launcher.once("exit", done));
    launcher.kill("SIGTERM");
    await exited;
  }
  await rm(dataDir, { recursive: true, force: true });
}, 60_000);

describe("quickstart", () => {
  it("starts API and worker with no DATABASE_URL on embedded Postgres and says which provider is active", () => {
    const lines = output.join("").split("\n").filter(Boolean);
    const records = lines.flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
    expect(records.find((r) => r.msg === "postgres.started")).toMatchObject({ embedded: true });
    expect(records.find((r) => r.msg === "provider.selected")).toMatchObject({ provider: "fake" });
    expect(records.find((r) => r.msg === "api.listening")).toBeTruthy();
    expect(records.find((r) => r.msg === "worker.started")).toBeTruthy();
    expect(records.find((r) => r.msg === "web.listening")).toBeTruthy();
  });

  it("the README walkthrough works as written", async () => {
    const script = await readmeWalkthrough();
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", script], {
      env: { ...process.env, API: api },
      timeout: 60_000,
    });
    // The walkthrough ends by printing the exec result and the computer.
    expect(stdout).toContain('"stdout": "hi\\n"');
    expect(stdout).toMatch(/"state": "running"/);
  }, 90_000);
});
