/**
 * A view-only viewer cannot stall the supervisor (SCR-2): the real daemon
 * (Xvfb + Chromium + x11vnc + its gateway) is flooded through the gateway by a view client, while
 * the test asks the daemon's `health` over its RPC socket. Asserted: the daemon's own CPU time
 * (utime + stime from /proc/<pid>/stat, children excluded) during the flood under a fixed bound,
 * and no health answer stalled; the p99 against a same-run baseline is printed.
 *
 * Floods: a ClientCutText announcing ~16 MiB followed by thousands of small websocket messages
 * (the old filter re-concatenated its pending bytes on every message: ~19 s of CPU), and a flood
 * of 1-byte messages.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { deriveScreenKey, newCapabilityId, sealCapability } from "@rakazo/protocol/capability";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const TOOLS = ["Xvfb", "x11vnc", "xdotool", "chromium"];
const missing = TOOLS.filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
if (missing.length > 0 && process.env.CI === "true") {
  throw new Error(`gateway flood test needs ${missing.join(", ")} (apt-get install -y ${missing.join(" ")})`);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const CLOCK_TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"]).stdout.toString().trim() || 100);

/**
 * Bounds asserted: generous against a parser that streams, far below one that re-assembles
 * (seconds of CPU, a 2.3 s stall). The CPU time is the daemon's own and does not depend on what
 * else the host runs; the health answers are only asked not to stall (the slowest under a
 * second). A tighter latency bound measured scheduling, not the supervisor: with ~20 answers a
 * "p99" is the single slowest, and on a 2-core host running other suites one answer took 164 ms
 * against a 9 ms baseline while the daemon spent 230 ms of CPU in all.
 */
const HEALTH_STALL_MS = 1000;
const FLOOD_CPU_MS = 1500;

describe.skipIf(missing.length > 0)(
  missing.length > 0
    ? `view flood against the daemon — skipped, missing: ${missing.join(", ")}`
    : "view flood against the daemon",
  () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "rakazo-flood-"));
    const runDir = path.join(root, "run");
    const displayBase = 300 + Math.floor(Math.random() * 150);
    const socket = path.join(runDir, "supervisor.sock");
    const gatewaySocket = path.join(runDir, "gateway.sock");
    const computerId = "cmp_flood000000000000";
    const master = randomBytes(32);
    const gatewayKey = deriveScreenKey(master, "gateway", computerId);
    let daemon: ChildProcess;
    const floodClients = new Set<ChildProcess>();

    const rpc = (method: string, params: unknown = {}) =>
      new Promise<{ ok: boolean; result?: unknown; error?: unknown }>((resolve, reject) => {
        const body = JSON.stringify(params);
        const request = http.request(
          { socketPath: socket, path: `/rpc/${method}`, method: "POST", agent: false },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (c: Buffer) => chunks.push(c));
            response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
          },
        );
        request.on("error", reject);
        request.end(body);
      });

    /** The daemon's own CPU time in ms (user + system, children excluded). */
    const cpuMs = (): number => {
      const stat = readFileSync(`/proc/${daemon.pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
    };

    /** Asks `health` back to back until `done` settles; returns every answer's latency. */
    const healthWhile = async (done: Promise<unknown>): Promise<number[]> => {
      let finished = false;
      void done.finally(() => {
        finished = true;
      });
      const latencies: number[] = [];
      while (!finished || latencies.length < 20) {
        const start = performance.now();
        const answer = await rpc("health");
        latencies.push(performance.now() - start);
        expect(answer.ok).toBe(true);
        await new Promise((r) => setTimeout(r, 2));
      }
      return latencies;
    };
    const p99 = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1] ?? 0;

    const viewTicket = async (): Promise<string> => {
      const slot = (await rpc("desktop.observe", { botId: "bot_flood" })) as {
        result: { slot: { index: number; generation: number } };
      };
      const now = Date.now();
      return sealCapability(gatewayKey, "k1", "gateway", {
        id: newCapabilityId(),
        computerId,
        botId: "bot_flood",
        slot: slot.result.slot.index,
        generation: slot.result.slot.generation,
        policy: "view",
        subject: "usr_flood",
        issuedAt: now,
        expiresAt: now + 10 * 60_000,
      });
    };

    const connections = async () =>
      (await rpc("screens.connections")).result as { policy: string; droppedInput: number }[];

    /** Runs the flood client (its own process) while asking `health`; the daemon's CPU and p99. */
    const measure = async (kind: "cut-text" | "one-byte") => {
      const ticket = await viewTicket();
      const client = spawn(
        process.execPath,
        [path.join(here, "..", "testing", "flood-client.ts"), gatewaySocket, ticket, kind],
        {
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      floodClients.add(client);
      let errors = "";
      client.stderr?.on("data", (c: Buffer) => {
        errors += c;
      });
      const exited = new Promise<number | null>((resolve) => client.once("exit", resolve));
      let output = "";
      const printed = (word: string) =>
        new Promise<void>((resolve, reject) => {
          const check = () => output.includes(word) && resolve();
          client.stdout?.on("data", check);
          check();
          void exited.then((code) => reject(new Error(`flood client exited ${code}: ${errors}`)));
        });
      client.stdout?.on("data", (c: Buffer) => {
        output += c;
      });
      await printed("ready");
      // The same health loop with no flood, same run: what this (shared) host costs anyway.
      const baseline = p99(await healthWhile(new Promise((r) => setTimeout(r, 1500))));
      const cpuBefore = cpuMs();
      const sent = printed("sent");
      sent.catch(() => undefined);
      client.stdin?.write("go\n");
      const latencies = await healthWhile(sent);
      await sent;
      // Let the daemon consume what is still queued in its socket.
      await new Promise((r) => setTimeout(r, 500));
      const cpu = cpuMs() - cpuBefore;
      const open = await connections();
      client.kill("SIGTERM");
      await exited;
      return {
        cpu,
        p99: p99(latencies),
        slowest: Math.max(...latencies),
        baseline,
        answers: latencies.length,
        open,
      };
    };

    beforeAll(async () => {
      daemon = spawn(
        process.execPath,
        [
          path.join(here, "..", "daemon", "main.ts"),
          "serve",
          `--run-dir=${runDir}`,
          `--workspace=${path.join(root, "home")}`,
          `--display-base=${displayBase}`,
          `--debug-port-base=${22000 + displayBase}`,
          `--log-dir=${path.join(root, "logs")}`,
          `--gateway-listen=unix:${gatewaySocket}`,
        ],
        { stdio: ["ignore", "ignore", "ignore"] },
      );
      for (let i = 0; i < 200; i += 1) {
        if ((await rpc("health").catch(() => undefined))?.ok) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const configured = await rpc("screens.configure", {
        computerId,
        keys: [{ kid: "k1", key: gatewayKey.toString("base64") }],
      });
      expect(configured.ok, JSON.stringify(configured)).toBe(true);
    }, 60_000);

    afterAll(async () => {
      for (const client of floodClients) if (client.exitCode === null) client.kill("SIGTERM");
      if (daemon?.pid && daemon.exitCode === null) {
        daemon.kill("SIGTERM");
        await new Promise((r) => daemon.once("exit", r));
      }
      rmSync(root, { recursive: true, force: true });
    }, 30_000);

    it("a ClientCutText announcing 16 MiB then thousands of small messages", async () => {
      const result = await measure("cut-text");
      console.info(
        `cut-text flood: daemon cpu ${result.cpu} ms, health p99 ${result.p99.toFixed(1)} ms (${result.answers} answers; without flood ${result.baseline.toFixed(1)} ms)`,
      );
      // Dropped, not refused: the viewer keeps watching and its one ClientCutText was counted.
      expect(result.open).toEqual([expect.objectContaining({ policy: "view", droppedInput: 1 })]);
      expect(result.slowest).toBeLessThan(HEALTH_STALL_MS);
      expect(result.cpu).toBeLessThan(FLOOD_CPU_MS);
    }, 60_000);

    it("a flood of 1-byte messages", async () => {
      const result = await measure("one-byte");
      console.info(
        `1-byte flood: daemon cpu ${result.cpu} ms, health p99 ${result.p99.toFixed(1)} ms (${result.answers} answers; without flood ${result.baseline.toFixed(1)} ms)`,
      );
      expect(result.open).toEqual([expect.objectContaining({ policy: "view", droppedInput: 1 })]);
      expect(result.slowest).toBeLessThan(HEALTH_STALL_MS);
      expect(result.cpu).toBeLessThan(FLOOD_CPU_MS);
    }, 60_000);
  },
);
