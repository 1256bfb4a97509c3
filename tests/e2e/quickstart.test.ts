// The README's promise: `./rakazo start` needs no environment (embedded Postgres, fake
// provider), and the curl walkthrough works as written. This starts the real launcher (which
// spawns the real API and worker processes) and runs the README's own walkthrough block.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
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

  it("the web root says what the service is and serves the README it links", async () => {
    const root = await fetch(`${web}/`);
    expect(root.status).toBe(200);
    // The web app's page; without JavaScript it still says what it is and links the README.
    const page = await root.text();
    expect(page).toContain("<title>Rakazo</title>");
    expect(page).toContain('href="/docs/README.md"');
    expect(await (await fetch(`${web}/docs/README.md`)).text()).toContain("<!-- walkthrough -->");
  });

  it("the README walkthrough works as written, and again on the same data with the first run's token", async () => {
    const script = await readmeWalkthrough();
    // The block carries its own strictness; it is run exactly as a user's `bash try.sh` would.
    const first = await walkthrough(script, { API: api });
    // The walkthrough ends by printing the exec result and the computer.
    expect(first.stdout).toContain('"stdout": "hi\\n"');
    expect(first.stdout).toMatch(/"state": "running"/);
    const token = /export TOKEN=(rkz_\S+)/.exec(first.stdout)?.[1];
    expect(token).toBeTruthy();

    // Second run, no token: bootstrap is refused, and the script says so and stops at once.
    const refused = await walkthrough(script, { API: api }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/setup\/bootstrap failed: ALREADY_BOOTSTRAPPED: .*rakazo token create/);
    expect(refused?.stdout).not.toContain("computer");

    // Second run with the token from the first: a new computer, same result.
    const second = await walkthrough(script, { API: api, TOKEN: token as string });
    expect(second.stdout).toContain('"stdout": "hi\\n"');
    expect(second.stdout).not.toContain("export TOKEN=");
  }, 120_000);
});

/** Runs the walkthrough with a clean environment plus `env` (no TOKEN leaking in from outside). */
function walkthrough(script: string, env: Record<string, string>) {
  const { TOKEN: _ignored, ...rest } = process.env;
  return run("bash", ["-c", script], { env: { ...rest, ...env }, timeout: 60_000 });
}

describe("the README walkthrough fails fast and loudly", () => {
  /** A loopback stand-in for the API whose answers a test scripts per RPC. */
  async function fakeApi(answer: (rpc: string) => unknown): Promise<{ url: string; close(): void }> {
    const server = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(answer((req.url ?? "").replace(/^\/rpc\//, ""))));
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
  }

  const computer = (state: string) => ({
    result: { id: "cmp_aaaaaaaaaaaaaaaaaaaa", state, lastError: state === "failed" ? "image missing" : null },
  });
  const setup = (rpc: string) =>
    rpc === "setup/bootstrap"
      ? { result: { token: "rkz_testtesttest", spaceId: "spc_aaaaaaaaaaaaaaaaaaaa" } }
      : rpc === "space/list"
        ? { result: [{ id: "spc_aaaaaaaaaaaaaaaaaaaa", name: "My Space" }] }
        : undefined;

  async function runAgainst(answer: (rpc: string) => unknown, extra: Record<string, string> = {}) {
    const server = await fakeApi(answer);
    try {
      const script = await readmeWalkthrough();
      const started = Date.now();
      const outcome = await walkthrough(script, { API: server.url, ...extra }).then(
        (ok) => ({ code: 0, ...ok }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      return { ...outcome, seconds: (Date.now() - started) / 1000 };
    } finally {
      server.close();
    }
  }

  it("stops on an error answer with its code and message", async () => {
    const outcome = await runAgainst(
      (rpc) => setup(rpc) ?? { error: { code: "MULTI_SCREEN_UNAVAILABLE", message: "no room" } },
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain("computer/create failed: MULTI_SCREEN_UNAVAILABLE: no room");
  });

  it("stops when the computer fails, with its last error", async () => {
    const outcome = await runAgainst((rpc) => setup(rpc) ?? computer("failed"));
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/is failed.*\nimage missing/s);
  });

  it("gives up waiting after WAIT_SECONDS", async () => {
    const outcome = await runAgainst((rpc) => setup(rpc) ?? computer("provisioning"), { WAIT_SECONDS: "1" });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain("is provisioning after up to 1s");
    expect(outcome.seconds).toBeLessThan(30);
  });

  it("stops when the API does not answer JSON", async () => {
    const outcome = await runAgainst(() => "not json");
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain("setup/bootstrap failed");
  });
});
