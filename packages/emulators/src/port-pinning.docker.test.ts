/**
 * Hosted ports keep one upstream stream per client connection and target (CMP-8 / PRV-1: the
 * emulators stand in for the providers' edge proxies, which reuse their upstream connection), so a
 * keep-alive client's warm request skips the `docker exec socat` of a fresh stream. Against real
 * `--network none` containers of the computer image: an HTTP server in each machine answers with
 * its machine's marker and the loopback port of the TCP connection it was reached on, which is the
 * upstream stream's identity.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { COMPUTER_IMAGE, requireDocker } from "@rakazo/sandbox/testing";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2BEmulator, startE2BEmulator } from "./e2b/emulator.ts";
import { createMachinePool } from "./machines.ts";
import { type PortListener, startPortListener } from "./port-proxy.ts";

// Skips only locally without an engine or image; fails under CI=true.
const gate = await requireDocker("hosted ports pin one upstream stream per client connection and target");

const PORT = 8080;
const OWNER = `port-pinning-${process.pid}`;
// `/close` answers with `connection: close`; `/exit` answers, then the server exits.
const SERVER = `
const [marker, port] = process.argv.slice(1);
require("node:http").createServer((q, s) => {
  if (q.url === "/close") s.setHeader("connection", "close");
  s.end(marker + " " + q.socket.remotePort, () => { if (q.url === "/exit") process.exit(0); });
}).listen(Number(port), "127.0.0.1");`;

interface Answer {
  readonly status: number;
  readonly marker: string;
  /** The in-machine server's view of the connection: one value per upstream stream. */
  readonly stream: string;
  readonly reusedClientConnection: boolean;
}

function get(agent: http.Agent, url: string, headers: http.OutgoingHttpHeaders = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () => {
        const [marker = "", stream = ""] = body.split(" ");
        resolve({
          status: response.statusCode ?? 0,
          marker,
          stream,
          reusedClientConnection: request.reusedSocket,
        });
      });
    });
    request.on("error", reject);
  });
}

describe.skipIf(gate.skip)(gate.title, () => {
  const docker = new Docker({ socketPath: "/var/run/docker.sock" });
  const labels = { "rakazo-test.suite": "port-pinning", "rakazo-test.owner": OWNER };
  const apiKey = `emu_${randomBytes(12).toString("hex")}`;
  const machines = createMachinePool({ image: COMPUTER_IMAGE, emulator: "pinning", owner: OWNER });
  const agents: http.Agent[] = [];
  let e2b: E2BEmulator;
  let listener: PortListener | undefined;

  /** A keep-alive client holding at most one connection: every request after the first reuses it. */
  const client = () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return agent;
  };

  const serve = async (container: string, marker: string) => {
    const exec = await docker
      .getContainer(container)
      .exec({ Cmd: ["node", "-e", SERVER, marker, String(PORT)], User: "1000:1000" });
    await exec.start({ Detach: true });
  };

  const until = async (attempt: () => Promise<Answer>): Promise<Answer> => {
    for (let i = 0; i < 100; i++) {
      const answer = await attempt();
      if (answer.status === 200) return answer;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the in-machine server never answered");
  };

  /**
   * The in-machine server exits (closing the client's stream with it) and comes back, ready
   * before the client's next request; that request must not go down the dead stream. The relay
   * in the machine outlives its TCP connection by socat's half-close timeout (0.5 s), so the
   * client waits that long before asking.
   */
  const restart = async (agent: http.Agent, url: string, start: () => Promise<void>) => {
    expect((await get(agent, `${url}/exit`)).status).toBe(200);
    const exited = Date.now();
    await start();
    const probe = client();
    await until(() => get(probe, `${url}/`));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exited + 1000 - Date.now())));
    return get(agent, `${url}/`);
  };

  const control = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${e2b.url}${path}`, {
      method,
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(response.status, `${method} ${path}`).toBeLessThan(300);
    return response.status === 204 ? undefined : ((await response.json()) as { sandboxID: string });
  };

  /** An E2B sandbox serving on PORT; its marker is its id. */
  const sandbox = async () => {
    const created = await control("POST", "/v2/sandboxes", { templateID: "base", timeout: 600 });
    const id = (created as { sandboxID: string }).sandboxID;
    await serve(`rakazo-emu-${id}`, id);
    const url = `${e2b.url}/hosts/${PORT}-${id}.${e2b.domain}`;
    const probe = client();
    await until(() => get(probe, `${url}/`));
    return { id, url };
  };

  beforeAll(async () => {
    e2b = await startE2BEmulator({ image: COMPUTER_IMAGE, apiKey, labels });
  });
  afterAll(async () => {
    for (const agent of agents) agent.destroy();
    await listener?.close();
    await e2b?.close();
    await machines.removeAll();
    for (const c of await docker.listContainers({
      all: true,
      filters: { label: [`rakazo-test.owner=${OWNER}`] },
    })) {
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
  });

  it("E2B: one keep-alive client connection's requests share one upstream stream", async () => {
    const { id, url } = await sandbox();
    const agent = client();
    const first = await get(agent, `${url}/`);
    const second = await get(agent, `${url}/again`);
    expect(first).toMatchObject({ status: 200, marker: id, reusedClientConnection: false });
    expect(second).toMatchObject({ status: 200, marker: id, reusedClientConnection: true });
    expect(second.stream).toBe(first.stream);
  });

  it("E2B: one client connection alternating between two machines reaches each on its own stream", async () => {
    const [a, b] = await Promise.all([sandbox(), sandbox()]);
    const agent = client();
    const answers: Answer[] = [];
    for (const target of [a, b, a, b, a, b]) answers.push(await get(agent, `${target.url}/`));
    expect(answers.map((x) => x.marker)).toEqual([a.id, b.id, a.id, b.id, a.id, b.id]);
    expect(answers.every((x) => x.status === 200)).toBe(true);
    expect(answers.slice(1).every((x) => x.reusedClientConnection)).toBe(true);
    const streamsOf = (id: string) => new Set(answers.filter((x) => x.marker === id).map((x) => x.stream));
    expect(streamsOf(a.id).size).toBe(1);
    expect(streamsOf(b.id).size).toBe(1);
  });

  it("E2B: a stream the machine closed is replaced; a paused machine is refused per request", async () => {
    const { id, url } = await sandbox();
    const agent = client();
    const closing = await get(agent, `${url}/close`);
    const afterClose = await get(agent, `${url}/`);
    expect(closing.status).toBe(200);
    expect(afterClose).toMatchObject({ status: 200, marker: id, reusedClientConnection: true });
    expect(afterClose.stream).not.toBe(closing.stream);

    const restarted = await restart(agent, url, () => serve(`rakazo-emu-${id}`, id));
    expect(restarted).toMatchObject({ status: 200, marker: id, reusedClientConnection: true });
    expect((await get(agent, `${url}/`)).stream).toBe(restarted.stream);

    await control("POST", `/sandboxes/${id}/pause`);
    expect((await get(agent, `${url}/`)).status).toBe(502);
    await control("POST", `/sandboxes/${id}/connect`, { timeout: 600 });
    expect(await get(agent, `${url}/`)).toMatchObject({ status: 200, marker: id });
  });

  it("a per-port listener (Boat, Daytona) pins its client connections' streams too", async () => {
    const machine = await machines.create(`pin-${randomBytes(4).toString("hex")}`);
    await serve(machine, "listener");
    listener = await startPortListener({
      connect: () => machines.connectPort(machine, PORT),
      admit: (request) => ({ ok: true, path: request.url ?? "/" }),
    });
    const url = listener.url;
    const probe = client();
    await until(() => get(probe, `${url}/`));
    const agent = client();
    const first = await get(agent, `${url}/`);
    const second = await get(agent, `${url}/close`);
    const third = await get(agent, `${url}/`);
    expect([first, second, third].map((x) => x.status)).toEqual([200, 200, 200]);
    expect(third.reusedClientConnection).toBe(true);
    expect(second.stream).toBe(first.stream);
    expect(third.stream).not.toBe(second.stream);

    const restarted = await restart(agent, url, () => serve(machine, "listener"));
    expect(restarted).toMatchObject({ status: 200, marker: "listener", reusedClientConnection: true });
  });
});
