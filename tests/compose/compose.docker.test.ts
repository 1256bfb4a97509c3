/**
 * Self-hosting for real (ARCH-4, PER-2, OPS-4): `docker-compose.yml` on images built
 * offline by infra/docker/build-images.sh (Debian roots from the package mirror, Node 24 from
 * the npm registry; nothing pulled), brought up with a compose implementation, then used the way
 * a self-hoster does: bootstrap with the generated token, create a computer on the host's Docker
 * engine, and watch its screen through the web service — the noVNC page's URL and the RFB stream
 * on its websocket, read to a full framebuffer update. Then `down -v` and nothing is left.
 *
 * Isolation: a unique project name; the compose network is made `internal` by an override file
 * (no route out), computers get no network (COMPUTER_NETWORK=none). Docker publishes no port
 * of a container on an internal network, so the override adds `edge`: socat (from the computer
 * image) bridging Unix sockets in a bind-mounted folder to api:8787 and web:8788, and this test
 * listens on 127.0.0.1 port 0 in front of those sockets. The optional S3 store (profile `s3`)
 * runs too, holding the homes.
 *
 * Needs the Docker engine, the computer image and a compose implementation (`docker-compose`
 * v1 from Debian, scripts/test-tools.sh installs it; or `docker compose` v2 with
 * RAKAZO_COMPOSE="docker compose"). Locally it skips naming what is missing; under CI it fails.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as connectSocket, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireDocker } from "../support/tools.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const COMPOSE = (process.env.RAKAZO_COMPOSE ?? "docker-compose").split(" ");
const SUITE = `compose on offline images (${COMPOSE.join(" ")})`;
const gate = await requireDocker(SUITE, [COMPOSE[0] as string, "mmdebstrap"]);

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
      stack.overrideFile,
      "--profile",
      "s3",
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

/**
 * A minimal RFB 3.8 client on a websocket: handshake (security None), ServerInit, then one
 * non-incremental FramebufferUpdateRequest for the whole screen, read until every pixel of the
 * Raw-encoded update has arrived. Returns the size and the pixels.
 */
function readFramebuffer(
  url: string,
): Promise<{ width: number; height: number; name: string; pixels: Buffer }> {
  return new Promise((resolve, reject) => {
    // Node's own WebSocket client (undici), as a browser's noVNC would connect.
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    let buffer = Buffer.alloc(0);
    let stage: "version" | "security" | "result" | "init" | "update" | "done" = "version";
    let width = 0;
    let height = 0;
    let name = "";
    const timer = setTimeout(() => fail(new Error(`no framebuffer within 60 s (stage ${stage})`)), 60_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      ws.close();
      reject(error);
    };
    ws.addEventListener("error", () => fail(new Error(`websocket failed at stage ${stage}`)));
    ws.addEventListener("close", (event) => {
      if (stage !== "done") fail(new Error(`websocket closed (${event.code}) at stage ${stage}`));
    });
    ws.addEventListener("message", (event) => {
      buffer = Buffer.concat([buffer, Buffer.from(event.data as ArrayBuffer)]);
      for (;;) {
        if (stage === "version") {
          if (buffer.length < 12) return;
          if (!buffer.subarray(0, 4).equals(Buffer.from("RFB "))) return fail(new Error("not RFB"));
          buffer = buffer.subarray(12);
          ws.send(Buffer.from("RFB 003.008\n"));
          stage = "security";
        } else if (stage === "security") {
          const count = buffer[0];
          if (count === undefined || buffer.length < 1 + count) return;
          const types = [...buffer.subarray(1, 1 + count)];
          buffer = buffer.subarray(1 + count);
          if (!types.includes(1)) return fail(new Error(`no None security: ${types.join(",")}`));
          ws.send(Buffer.from([1]));
          stage = "result";
        } else if (stage === "result") {
          if (buffer.length < 4) return;
          if (buffer.readUInt32BE(0) !== 0) return fail(new Error("security failed"));
          buffer = buffer.subarray(4);
          ws.send(Buffer.from([1])); // ClientInit, shared
          stage = "init";
        } else if (stage === "init") {
          if (buffer.length < 24) return;
          const nameLength = buffer.readUInt32BE(20);
          if (buffer.length < 24 + nameLength) return;
          width = buffer.readUInt16BE(0);
          height = buffer.readUInt16BE(2);
          const bitsPerPixel = buffer[4];
          if (bitsPerPixel !== 32) return fail(new Error(`unexpected ${bitsPerPixel} bits per pixel`));
          name = buffer.subarray(24, 24 + nameLength).toString("utf8");
          buffer = buffer.subarray(24 + nameLength);
          const request = Buffer.alloc(10);
          request.writeUInt8(3, 0); // FramebufferUpdateRequest, not incremental
          request.writeUInt16BE(width, 6);
          request.writeUInt16BE(height, 8);
          ws.send(request);
          stage = "update";
        } else {
          // FramebufferUpdate: type 0, padding, rectangle count; Raw rectangles (no SetEncodings sent).
          if (buffer.length < 4) return;
          if (buffer[0] !== 0) return fail(new Error(`server message ${buffer[0]} before the update`));
          const rectangles = buffer.readUInt16BE(2);
          const pixels = Buffer.alloc(width * height * 4);
          let offset = 4;
          for (let i = 0; i < rectangles; i++) {
            if (buffer.length < offset + 12) return;
            const x = buffer.readUInt16BE(offset);
            const y = buffer.readUInt16BE(offset + 2);
            const w = buffer.readUInt16BE(offset + 4);
            const h = buffer.readUInt16BE(offset + 6);
            const encoding = buffer.readInt32BE(offset + 8);
            if (encoding !== 0) return fail(new Error(`encoding ${encoding}, expected Raw`));
            if (buffer.length < offset + 12 + w * h * 4) return;
            for (let row = 0; row < h; row++) {
              const from = offset + 12 + row * w * 4;
              buffer.copy(pixels, ((y + row) * width + x) * 4, from, from + w * 4);
            }
            offset += 12 + w * h * 4;
          }
          stage = "done";
          clearTimeout(timer);
          ws.close();
          return resolve({ width, height, name, pixels });
        }
      }
    });
  });
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

  beforeAll(async () => {
    // Every image offline (reused when its content hash is unchanged).
    const built = await run("bash", [join(root, "infra/docker/build-images.sh")], {
      cwd: root,
      timeout: 1_500_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    for (const line of built.stdout.trim().split("\n")) {
      const [key, value] = line.split("=");
      if (key && value) images[key] = value;
    }
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
          },
        },
      }),
    );
    stack.env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...images,
      RAKAZO_DATA_DIR: stack.dataDir,
      RAKAZO_API_PUBLISH: "127.0.0.1::8787",
      RAKAZO_WEB_PUBLISH: "127.0.0.1::8788",
      COMPUTER_NETWORK: "none",
      OBJECT_STORAGE_BUCKET: "rakazo-homes",
      OBJECT_STORAGE_ENDPOINT: "http://s3:9000",
      OBJECT_STORAGE_REGION: "us-east-1",
    };
    await compose(stack, ["up", "-d"], 1_200_000);
    stack.api = await loopbackTo(join(stack.edgeDir, "api.sock"), listeners);
    stack.web = await loopbackTo(join(stack.edgeDir, "web.sock"), listeners);
    await until(
      "the API and web to be healthy",
      async () => {
        const api = await fetch(`${stack.api}/health`);
        const web = await fetch(`${stack.web}/health`);
        return api.ok && web.ok ? true : undefined;
      },
      180_000,
    );
  }, 1_800_000);

  afterAll(async () => {
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
    // The web service cannot read the core secrets, and it has no Docker socket.
    const webSees = await compose(stack, ["exec", "-T", "web", "ls", "/run/rakazo-secrets"]);
    expect(webSees.stdout.trim().split("\n")).toEqual(["web"]);
    await expect(
      compose(stack, ["exec", "-T", "web", "test", "-e", "/var/run/docker.sock"]),
    ).rejects.toThrow();
  });

  it("bootstraps only with the generated token, creates a computer, and shows its screen through the web service", async () => {
    await expect(
      rpc(stack, "setup/bootstrap", { userName: "me", spaceName: "Ops", botName: "Ada" }, "wrong"),
    ).rejects.toThrow(/UNAUTHENTICATED/);
    const setup = await rpc<{ token: string; spaceId: string; botId: string }>(
      stack,
      "setup/bootstrap",
      { userName: "me", spaceName: "Ops", botName: "Ada" },
      token,
    );
    const created = await rpc<{ id: string }>(
      stack,
      "computer/create",
      { spaceId: setup.spaceId },
      setup.token,
    );
    const computer = await until(
      "the computer to run",
      async () => {
        const got = await rpc<{ state: string; lastError?: string }>(
          stack,
          "computer/get",
          { computerId: created.id },
          setup.token,
        );
        if (got.state === "failed") throw new Error(`computer failed: ${got.lastError}`);
        return got.state === "running" ? got : undefined;
      },
      180_000,
    );
    expect(computer.state).toBe("running");

    // The computer runs on the host's engine, with no network, its home under DATA_DIR.
    const containerId = await docker(["ps", "-q", "--filter", `label=rakazo.computer=${created.id}`]);
    expect(containerId).not.toBe("");
    const container = JSON.parse(await docker(["inspect", containerId]))[0] as {
      HostConfig: { NetworkMode: string };
      Mounts: { Source: string }[];
    };
    expect(container.HostConfig.NetworkMode).toBe("none");
    expect(container.Mounts.some((m) => m.Source.startsWith(`${stack.dataDir}/`))).toBe(true);

    const screen = await rpc<{ url: string }>(
      stack,
      "computer/screenUrl",
      { computerId: created.id, botId: setup.botId, policy: "view" },
      setup.token,
    );
    // The URL names the web service's public address; here that is the ephemeral port.
    const url = new URL(new URL(screen.url).pathname, stack.web);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");

    const wsUrl = new URL("websockify", url);
    wsUrl.protocol = "ws:";
    const frame = await readFramebuffer(wsUrl.href);
    expect(frame.width).toBeGreaterThanOrEqual(640);
    expect(frame.height).toBeGreaterThanOrEqual(480);
    // A real desktop, not an empty buffer: more than one colour on screen.
    const colours = new Set<number>();
    for (let i = 0; i < frame.pixels.length; i += 4 * 97)
      colours.add(frame.pixels.readUInt32LE(i) & 0xffffff);
    expect(colours.size).toBeGreaterThan(1);

    // A forged capability is refused by the same path.
    const forged = new URL(
      url.href.replace(/\/screens\/[^/]+\//, "/screens/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/"),
    );
    expect((await fetch(forged)).status).not.toBe(200);

    // Deleting it removes its container from the host engine (the worker does it).
    await rpc(stack, "computer/delete", { computerId: created.id }, setup.token);
    await until(
      "the computer's container to be removed",
      async () => ((await computersUnder(stack.dataDir)).length === 0 ? true : undefined),
      120_000,
    );
  });

  it("tears everything down with `down -v`: no container, network or volume of the project is left", async () => {
    await compose(stack, ["down", "-v", "--remove-orphans", "-t", "20"]);
    const label = `label=com.docker.compose.project=${stack.project}`;
    expect(await docker(["ps", "-aq", "--filter", label])).toBe("");
    expect(await docker(["network", "ls", "-q", "--filter", label])).toBe("");
    expect(await docker(["volume", "ls", "-q", "--filter", label])).toBe("");
    expect(await computersUnder(stack.dataDir)).toEqual([]);
  });
});
