/**
 * Self-hosting for real (ARCH-4, PER-2, OPS-4): `docker-compose.yml` on images built
 * offline by infra/docker/build-images.sh (Debian roots from the package mirror, Node 24 from
 * the npm registry, the web app built inside the image build; nothing pulled), brought up with
 * a compose implementation, then used the way a self-hoster does, in real Chromium: the web
 * port serves the web app, first-run setup with the generated bootstrap token, the Team
 * Computer started from the app, a bot's screen showing a desktop, control taken and typed
 * into, a shell prompt, a file uploaded and previewed, the web service restarted with the
 * person still signed in, and `down -v` leaving no container, network or volume of the stack,
 * its computers included (checkpointed to the S3 store first). Beside that: every setting
 * `.env.example` documents reaches the process that reads it (a one-off container of each
 * service, through the real entrypoint).
 *
 * Isolation: a unique project name; the compose network is made `internal` by an override file
 * (no route out), computers get no network (COMPUTER_NETWORK=none). Docker publishes no port
 * of a container on an internal network, so the override adds `edge`: socat (from the computer
 * image) bridging Unix sockets in a bind-mounted folder to api:8787 and web:8788, and this test
 * listens on 127.0.0.1 port 0 in front of those sockets (WEB_PUBLIC_URL is that address, as a
 * self-hoster's would be theirs). The optional S3 store (docker-compose.s3.yml, on its defaults) runs too, holding the homes.
 *
 * Compose: the v2 plugin (`docker compose`) when `docker compose version` works, else Debian's
 * `docker-compose` v1 (scripts/test-tools.sh installs it; v2 is not packaged for this Debian);
 * RAKAZO_COMPOSE names one explicitly. The same file and steps run under both; that it uses
 * nothing v2 rejects is checked against the compose-spec schema by settings.test.ts.
 * Needs the Docker engine, the computer image, a compose implementation and Chromium. Locally
 * it skips naming what is missing; under CI it fails.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectSocket, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Browser, chromium, type Frame, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADLESS_CHROMIUM } from "../support/headless-browser.ts";
import { requireDocker } from "../support/tools.ts";
import {
  documentedVariables,
  NOT_FROM_ENV,
  passedFromEnv,
  type Service,
  SLICES,
} from "./compose-settings.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");

/** The v2 plugin where it works, else v1 (see the header). */
function composeCommand(): string[] {
  if (process.env.RAKAZO_COMPOSE) return process.env.RAKAZO_COMPOSE.split(" ");
  try {
    execFileSync("docker", ["compose", "version"], { stdio: "ignore" });
    return ["docker", "compose"];
  } catch {
    return ["docker-compose"];
  }
}
const COMPOSE = composeCommand();
const SUITE = `compose on offline images (${COMPOSE.join(" ")})`;
const gate = await requireDocker(SUITE, [COMPOSE[0] as string, "mmdebstrap", HEADLESS_CHROMIUM]);
/** Timings of this run, printed at the end (docs/self-hosting.md quotes them). */
const figures: Record<string, number> = {};

interface Stack {
  project: string;
  dataDir: string;
  edgeDir: string;
  overrideFile: string;
  env: NodeJS.ProcessEnv;
  api: string;
  web: string;
}

async function compose(stack: Stack, args: string[], timeoutMs = 300_000) {
  const [command, ...prefix] = COMPOSE as [string, ...string[]];
  return run(
    command,
    [
      ...prefix,
      "--project-name",
      stack.project,
      "--project-directory",
      root,
      "-f",
      join(root, "docker-compose.yml"),
      "-f",
      join(root, "docker-compose.s3.yml"),
      "-f",
      stack.overrideFile,
      ...args,
    ],
    { env: stack.env, cwd: root, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
  );
}

async function docker(args: string[]): Promise<string> {
  return (await run("docker", args, { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
}

/** Containers on the host engine whose mounts come from `dataDir`: the stack's computers. */
async function computersUnder(dataDir: string): Promise<string[]> {
  const ids = (await docker(["ps", "-aq", "--filter", "label=rakazo.computer"])).split("\n").filter(Boolean);
  if (ids.length === 0) return [];
  const inspected = JSON.parse(await docker(["inspect", ...ids])) as {
    Id: string;
    Mounts: { Source: string }[];
  }[];
  return inspected.filter((c) => c.Mounts.some((m) => m.Source.startsWith(`${dataDir}/`))).map((c) => c.Id);
}

async function rpc<T>(stack: Stack, name: string, input: unknown, token: string): Promise<T> {
  const response = await fetch(`${stack.api}/rpc/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(input),
  });
  const body = (await response.json()) as { result?: T; error?: { code: string; message: string } };
  if (!body.result) throw new Error(`${name}: ${body.error?.code}: ${body.error?.message}`);
  return body.result;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${String(last ?? "")}`);
    await new Promise((done) => setTimeout(done, 500));
  }
}

/** A loopback listener (port 0) that forwards each connection to a Unix socket. */
async function loopbackTo(socketPath: string, servers: Server[]): Promise<string> {
  const server = createServer((client) => {
    const upstream = connectSocket(socketPath);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** The part of a page's DOM the screen check reads (this file is compiled without DOM types). */
interface PageCanvas {
  width: number;
  height: number;
  getContext(
    kind: "2d",
  ): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}

describe.skipIf(gate.skip)(gate.title, () => {
  const stack: Stack = {
    project: `rkzcompose${randomBytes(4).toString("hex")}`,
    dataDir: "",
    edgeDir: "",
    overrideFile: "",
    env: {},
    api: "",
    web: "",
  };
  const images: Record<string, string> = {};
  const listeners: Server[] = [];
  let token = "";
  let browser: Browser;

  beforeAll(async () => {
    // Every image offline (reused when its content hash is unchanged).
    const building = Date.now();
    const built = await run("bash", [join(root, "infra/docker/build-images.sh")], {
      cwd: root,
      timeout: 1_500_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    for (const line of built.stdout.trim().split("\n")) {
      const [key, value] = line.split("=");
      if (key && value) images[key] = value;
    }
    figures.imagesSeconds = (Date.now() - building) / 1000;
    // DATA_DIR has the same absolute path on the host and in API/worker (the engine resolves
    // the bind mounts of computers on the host).
    stack.dataDir = await mkdtemp(join(tmpdir(), "rkz-compose-"));
    stack.edgeDir = await mkdtemp(join(tmpdir(), "rkz-compose-edge-"));
    stack.overrideFile = join(stack.edgeDir, "test-override.yml");
    const bridge = (name: string, target: string) =>
      `socat UNIX-LISTEN:/edge/${name}.sock,fork,unlink-early,mode=600 TCP:${target}`;
    await writeFile(
      stack.overrideFile,
      // No route out of the compose network; the edge bridge stands in for published ports.
      JSON.stringify({
        networks: { default: { internal: true, labels: { "rakazo.test-suite": "compose" } } },
        services: {
          edge: {
            image: images.RAKAZO_COMPUTER_IMAGE,
            user: "0:0",
            entrypoint: ["/bin/sh", "-c"],
            command: [`${bridge("api", "api:8787")} & ${bridge("web", "web:8788")} & wait`],
            volumes: [`${stack.edgeDir}:/edge`],
            labels: { "rakazo.test-suite": "compose" },
            // `sh -c … & wait` ignores SIGTERM: without this, `down` waited out its 30 s for it.
            stop_signal: "SIGKILL",
          },
        },
      }),
    );
    // The loopback listeners come first: their address is the stack's public web URL.
    stack.api = await loopbackTo(join(stack.edgeDir, "api.sock"), listeners);
    stack.web = await loopbackTo(join(stack.edgeDir, "web.sock"), listeners);
    stack.env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...images,
      RAKAZO_DATA_DIR: stack.dataDir,
      RAKAZO_API_PUBLISH: "127.0.0.1::8787",
      RAKAZO_WEB_PUBLISH: "127.0.0.1::8788",
      COMPUTER_NETWORK: "none",
      WEB_PUBLIC_URL: stack.web,
    };
    const up = Date.now();
    await compose(stack, ["up", "-d"], 1_200_000);
    await until(
      "the API and web to be healthy",
      async () => {
        const api = await fetch(`${stack.api}/health`);
        const web = await fetch(`${stack.web}/health`);
        return api.ok && web.ok ? true : undefined;
      },
      180_000,
    );
    figures.upToHealthySeconds = (Date.now() - up) / 1000;
    browser = await chromium.launch({
      executablePath: HEADLESS_CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 1_800_000);

  afterAll(async () => {
    await browser?.close();
    console.log(`compose figures: ${JSON.stringify(figures)}`);
    if (!stack.overrideFile) return;
    const logs = await compose(stack, ["logs", "--no-color"]).catch(() => ({ stdout: "" }));
    if (process.env.RAKAZO_COMPOSE_LOGS === "1") console.log(logs.stdout);
    await compose(stack, ["down", "-v", "--remove-orphans", "-t", "20"]).catch(() => undefined);
    // Computers the API made on the host engine live outside the project: remove any left.
    const computers = await computersUnder(stack.dataDir).catch(() => []);
    if (computers.length > 0) await docker(["rm", "-f", ...computers]).catch(() => "");
    for (const server of listeners) server.close();
    await rm(stack.dataDir, { recursive: true, force: true });
    await rm(stack.edgeDir, { recursive: true, force: true });
  }, 300_000);

  it("runs every service from the offline images, the secrets only in volumes", async () => {
    const { stdout } = await compose(stack, ["ps", "-q"]);
    const ids = stdout.trim().split("\n").filter(Boolean);
    const inspected = JSON.parse(await docker(["inspect", ...ids])) as {
      Name: string;
      Config: { Image: string; Env: string[]; Labels: Record<string, string> };
    }[];
    const byService = Object.fromEntries(
      inspected.map((c) => [c.Config.Labels["com.docker.compose.service"], c]),
    );
    expect(Object.keys(byService).sort()).toEqual([
      "api",
      "edge",
      "postgres",
      "s3",
      "secrets",
      "web",
      "worker",
    ]);
    expect(byService.api?.Config.Image).toBe(images.RAKAZO_SERVER_IMAGE);
    expect(byService.postgres?.Config.Image).toBe(images.RAKAZO_POSTGRES_IMAGE);

    token = (
      await compose(stack, ["exec", "-T", "api", "cat", "/run/rakazo-secrets/core/bootstrap-token"])
    ).stdout.trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // Neither an image nor a container's configuration carries a secret.
    for (const image of [images.RAKAZO_SERVER_IMAGE, images.RAKAZO_POSTGRES_IMAGE]) {
      expect(await docker(["image", "inspect", image as string])).not.toContain(token);
    }
    expect(JSON.stringify(inspected)).not.toContain(token);
    // docker-compose.s3.yml points API and worker at its store by default (nothing in the env).
    for (const service of ["api", "worker"] as const) {
      expect(byService[service]?.Config.Env).toEqual(
        expect.arrayContaining([
          "OBJECT_STORAGE_ENDPOINT=http://s3:9000",
          "OBJECT_STORAGE_BUCKET=rakazo-homes",
        ]),
      );
    }
    // The web service cannot read the core secrets, and it has no Docker socket.
    const webSees = await compose(stack, ["exec", "-T", "web", "ls", "/run/rakazo-secrets"]);
    expect(webSees.stdout.trim().split("\n")).toEqual(["web"]);
    await expect(
      compose(stack, ["exec", "-T", "web", "test", "-e", "/var/run/docker.sock"]),
    ).rejects.toThrow();
  });

  it("keeps homes on DATA_DIR's filesystem under RAKAZO_DOCKER_HOME_DISKS=auto, with one warning naming why", async () => {
    // The worker's mounts would not reach the engine (nor the engine's the API and worker):
    // its probe at start says so once, and the stack runs on without home disks.
    const { stdout } = await compose(stack, ["logs", "--no-color", "worker"]);
    const warnings = stdout.split("\n").filter((line) => line.includes("docker.home_disks.unavailable"));
    expect(warnings, stdout.slice(-4000)).toHaveLength(1);
    expect(warnings[0]).toContain('"level":"warn"');
    expect(warnings[0]).toContain('"setting":"RAKAZO_DOCKER_HOME_DISKS=auto"');
    expect(warnings[0]).toMatch(/"reason":"(no_tools|mount_refused|not_visible_to_engine)"/);
  });

  it("serves the web app that the image build made at the web port", async () => {
    const response = await fetch(`${stack.web}/`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain("The web app is not built");
    // Vite's production index: the bundle under /app/, which the service serves too.
    const script = /<script[^>]+src="(\/app\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const bundle = await fetch(`${stack.web}${script}`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toMatch(/javascript/);
  });

  it("every setting .env.example documents reaches each process that reads it", async () => {
    // Every documented variable set to a marker in the environment compose reads (as `.env`
    // would); a one-off container of each service, through the real entrypoint, prints what
    // its process would get. Fixed variables must keep their own value.
    const marker = (name: string) => `marker-${name.toLowerCase()}`;
    const markers = Object.fromEntries(documentedVariables().map((name) => [name, marker(name)]));
    const passed = passedFromEnv();
    const print = "process.stdout.write(JSON.stringify(process.env))";
    for (const service of Object.keys(SLICES) as Service[]) {
      const { stdout } = await compose({ ...stack, env: { ...stack.env, ...markers } }, [
        "run",
        "--rm",
        "--no-deps",
        "-T",
        service,
        "node",
        "-e",
        print,
      ]);
      const seen = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Record<string, string>;
      expect(passed[service].length, service).toBeGreaterThan(0);
      const lost = passed[service].filter((name) => !seen[name]?.includes(marker(name)));
      expect(lost, `${service}: set in .env, not seen by the process`).toEqual([]);
      for (const name of Object.keys(NOT_FROM_ENV)) {
        if (!SLICES[service].includes(name)) continue;
        expect(seen[name] ?? "", `${service}: ${name} (${NOT_FROM_ENV[name]})`).not.toContain(marker(name));
      }
    }
    // A key brought as a file instead: `.env` blank, the file in the secrets-provider volume.
    await compose(stack, [
      "run",
      "--rm",
      "--no-deps",
      "-T",
      "--entrypoint",
      "sh",
      "secrets",
      "-c",
      "umask 077; printf %s key-from-a-file > /run/rakazo-secrets/provider/OPENROUTER_API_KEY",
    ]);
    const { stdout } = await compose(stack, [
      "run",
      "--rm",
      "--no-deps",
      "-T",
      "worker",
      "node",
      "-e",
      "process.stdout.write(String(process.env.OPENROUTER_API_KEY))",
    ]);
    expect(stdout.trim().split("\n").at(-1)).toBe("key-from-a-file");
    await compose(stack, [
      "run",
      "--rm",
      "--no-deps",
      "-T",
      "--entrypoint",
      "rm",
      "secrets",
      "/run/rakazo-secrets/provider/OPENROUTER_API_KEY",
    ]);
  }, 300_000);

  describe("a self-hoster's journey in Chromium", () => {
    let page: Page;
    let apiToken = "";
    let computerId = "";
    let botId = "";
    let started = 0;

    beforeAll(async () => {
      started = Date.now();
      page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
      page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
    });

    const screenFrame = async (): Promise<Frame> => {
      await page.waitForSelector('[data-screen-status="connected"]', { timeout: 60_000 });
      const frame = page.frames().find((f) => f.url().includes("/screens/"));
      if (!frame) throw new Error("no screen frame");
      return frame;
    };

    it("first-run setup in the web app with the generated bootstrap token", async () => {
      // A wrong token is refused by the API itself.
      await expect(
        rpc(stack, "setup/bootstrap", { userName: "x", spaceName: "x", botName: "x" }, "wrong"),
      ).rejects.toThrow(/UNAUTHENTICATED/);
      await page.goto(stack.web);
      await page.getByRole("button", { name: "First run? Set up this installation", exact: true }).click();
      await page.getByLabel("Bootstrap token or setup code (needed from another machine)").fill(token);
      await page.getByRole("button", { name: "Set up", exact: true }).click();
      apiToken = (await page.getByTestId("bootstrap-token").textContent()) ?? "";
      expect(apiToken).toMatch(/^rkz_/);
      await page.getByRole("button", { name: "Continue", exact: true }).click();
      await page.getByRole("heading", { name: "Spaces" }).waitFor();
    });

    it("starts the Team Computer from the app and sees it running", async () => {
      const [space] = await rpc<{ id: string }[]>(stack, "space/list", {}, apiToken);
      const [computer] = await rpc<{ id: string; name: string }[]>(
        stack,
        "computer/list",
        { spaceId: space?.id },
        apiToken,
      );
      computerId = computer?.id ?? "";
      botId = (await rpc<{ id: string }[]>(stack, "bot/list", { spaceId: space?.id }, apiToken))[0]?.id ?? "";
      const row = page.locator("li.computer").first();
      await row.getByRole("button", { name: "Start", exact: true }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Confirm", exact: true }).click();
      await expect
        .poll(() => row.getByTestId("computer-state").textContent(), { timeout: 180_000 })
        .toBe("running");
      // On the host's engine, with no network, its home under RAKAZO_DATA_DIR.
      const containerId = await docker(["ps", "-q", "--filter", `label=rakazo.computer=${computerId}`]);
      const [container] = JSON.parse(await docker(["inspect", containerId])) as {
        HostConfig: { NetworkMode: string };
        Mounts: { Source: string }[];
      }[];
      expect(container?.HostConfig.NetworkMode).toBe("none");
      expect(container?.Mounts.some((m) => m.Source.startsWith(`${stack.dataDir}/`))).toBe(true);
    }, 200_000);

    it("shows the bot's screen with a desktop on it, takes control and types", async () => {
      // The bot's first desktop starts on its first action (retried: a loaded host may exceed
      // the supervisor's Chromium start once).
      for (let attempt = 0; ; attempt++) {
        const acted = await rpc(
          stack,
          "computer/act",
          { computerId, botId, actions: [{ type: "wait", ms: 500 }] },
          apiToken,
        ).then(
          () => true,
          (error: unknown) => {
            if (attempt >= 2) throw error;
            return false;
          },
        );
        if (acted) break;
      }
      await page.goto(`${stack.web}/#/computers/${computerId}`);
      const view = await screenFrame();
      // The frame the person sees: more than one colour on noVNC's canvas, not a blank buffer.
      await expect
        .poll(
          () =>
            view.evaluate(() => {
              const { document } = globalThis as unknown as {
                document: { querySelector(selector: string): PageCanvas | null };
              };
              const canvas = document.querySelector("canvas");
              const context = canvas?.getContext("2d");
              if (!canvas || !context || canvas.width === 0) return 0;
              const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
              const colours = new Set<number>();
              for (let i = 0; i < data.length; i += 4 * 101)
                colours.add(((data[i] ?? 0) << 16) | ((data[i + 1] ?? 0) << 8) | (data[i + 2] ?? 0));
              return colours.size;
            }),
          { timeout: 30_000 },
        )
        .toBeGreaterThan(1);
      await page.getByRole("button", { name: "Take control", exact: true }).click();
      await expect
        .poll(() => page.getByTestId("control-state").textContent())
        .toBe("You control this screen.");
      const control = await screenFrame();
      expect(
        await control.evaluate(
          () => (globalThis as unknown as { __rakazoRfb: { viewOnly: boolean } }).__rakazoRfb.viewOnly,
        ),
      ).toBe(false);
      await control.evaluate(() =>
        (globalThis as unknown as { __rakazoRfb: { focus(): void } }).__rakazoRfb.focus(),
      );
      await page.keyboard.type("hello", { delay: 40 });
    }, 180_000);

    it("opens the shell: a prompt, and a command's output", async () => {
      await page.getByRole("tab", { name: "Shell", exact: true }).click();
      const rows = page.locator(".xterm-rows");
      // xterm.js renders one div per row; the last non-empty one holds the cursor's prompt.
      const lastLine = async () =>
        (await rows.locator("div").allTextContents())
          .map((line) => line.trimEnd())
          .filter(Boolean)
          .at(-1) ?? "";
      await expect.poll(lastLine, { timeout: 30_000 }).toMatch(/[$#]$/);
      await page.locator(".xterm-host").click();
      await page.keyboard.type("echo rkz-$((6*7))", { delay: 10 });
      await page.keyboard.press("Enter");
      await expect.poll(() => rows.textContent(), { timeout: 30_000 }).toContain("rkz-42");
    }, 90_000);

    it("uploads a file and previews it", async () => {
      await page.getByRole("tab", { name: "Files", exact: true }).click();
      await page.getByTestId("files").waitFor();
      // Uploads land in the folder on screen; the top level takes none, shared/ does (CMP-1).
      await page.getByRole("button", { name: "Open shared/", exact: true }).click();
      await expect.poll(() => page.getByTestId("files-path").textContent()).toBe("/shared");
      await page.locator('input[type="file"]').setInputFiles({
        name: "compose-upload.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("uploaded through compose\n"),
      });
      await page.getByText("Uploaded compose-upload.txt.").waitFor({ timeout: 30_000 });
      await page.getByRole("button", { name: "compose-upload.txt", exact: true }).click();
      await page.getByText("uploaded through compose").waitFor({ timeout: 15_000 });
    }, 60_000);

    it("restarting the web service keeps the person signed in", async () => {
      await compose(stack, ["restart", "-t", "10", "web"]);
      await until(
        "the web service to be back",
        async () => ((await fetch(`${stack.web}/health`)).ok ? true : undefined),
        120_000,
      );
      await page.goto(stack.web);
      await page.getByRole("heading", { name: "Spaces" }).waitFor({ timeout: 30_000 });
      expect(await page.getByRole("heading", { name: "Sign in" }).count()).toBe(0);
      figures.journeySeconds = (Date.now() - started) / 1000;
    }, 180_000);
  });

  it("tears everything down with `down -v`: the computers stopped first, then no container, network or volume", async () => {
    // The Team Computer is still running: the stack's worker tries to stop it on the way down.
    expect(await computersUnder(stack.dataDir)).not.toEqual([]);
    // The worker's own account of its shutdown, printed when a computer is left.
    const [worker] = (await compose(stack, ["ps", "-q", "worker"])).stdout.trim().split("\n");
    const workerLog = spawn("docker", ["logs", "-f", "--tail", "0", worker as string]);
    let shutdownLog = "";
    const collect = (chunk: Buffer) => {
      shutdownLog += chunk.toString();
    };
    workerLog.stdout.on("data", collect);
    workerLog.stderr.on("data", collect);
    const down = Date.now();
    await compose(stack, ["down", "-v", "--remove-orphans", "-t", "30"]);
    figures.downSeconds = (Date.now() - down) / 1000;
    workerLog.kill();
    // The store outlived the worker (API and worker depend on it), so its shutdown checkpoint
    // landed and the computer was stopped and removed, not left running with no control plane.
    const left = await computersUnder(stack.dataDir);
    if (left.length > 0) console.log(`worker on the way down:\n${shutdownLog}`);
    expect(left).toEqual([]);
    expect(shutdownLog).toContain("computer.shutdown_stopped");
    const label = `label=com.docker.compose.project=${stack.project}`;
    expect(await docker(["ps", "-aq", "--filter", label])).toBe("");
    expect(await docker(["network", "ls", "-q", "--filter", label])).toBe("");
    expect(await docker(["volume", "ls", "-q", "--filter", label])).toBe("");
  }, 180_000);
});
