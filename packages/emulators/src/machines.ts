/**
 * The machines behind every emulator: one Docker container of the computer image per emulated
 * sandbox, with `--network none` (only `lo`), reached only through `docker exec` — commands,
 * files and port traffic alike. What must stay true:
 * - a container never gets a network interface or a published port; a port "inside" a machine
 *   is reached by an exec of `socat STDIO TCP:127.0.0.1:<port>` (`connectPort`);
 * - every container carries `<labelPrefix>.emulator=<name>` and the owner label, so a test or
 *   the CLI removes exactly what it made (`removeAll`);
 * - the machine runs the bare image (`sleep infinity` under tini): whatever runs in it — the
 *   supervisor included — is started by the client through commands, as on the real service;
 *   only a named template (./templates.ts) boots an image and command of its own, as a real one can.
 */
import { Duplex, PassThrough } from "node:stream";
import { createDemuxer, type RawExecResult, runExec } from "@rakazo/sandbox/docker";
import Docker from "dockerode";
import { type EmulatedTemplates, machineSpec } from "./templates.ts";

export interface MachinePoolOptions {
  readonly image: string;
  /** Which emulator made the machines (`boat`, `daytona`): a label, and part of the name. */
  readonly emulator: string;
  /** Label value naming who owns these machines (a test file, a branch, the CLI). */
  readonly owner: string;
  readonly docker?: Docker;
  readonly labelPrefix?: string;
  readonly memoryBytes?: number;
  /** Templates by name (./templates.ts): an image of their own and a boot command. */
  readonly templates?: EmulatedTemplates;
}

interface MachineExec {
  /** A shell command line, run by `bash -c` as the machine's user (uid 1000). */
  readonly command: string;
  /** Absolute directory inside the machine; default the user's home. */
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  readonly timeoutMs?: number;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
}

type MachineState = "running" | "stopped" | "missing";

export interface MachinePool {
  /** `template` picks one of `templates`; otherwise the machine is the bare image, asleep. */
  create(name: string, template?: string): Promise<string>;
  start(containerId: string): Promise<void>;
  stop(containerId: string): Promise<void>;
  remove(containerId: string): Promise<void>;
  state(containerId: string): Promise<MachineState>;
  exec(containerId: string, request: MachineExec): Promise<RawExecResult>;
  /** A byte stream to `127.0.0.1:<port>` inside the machine. */
  connectPort(containerId: string, port: number): Promise<Duplex>;
  /** Removes every machine of this pool's emulator and owner. */
  removeAll(): Promise<void>;
}

export const MACHINE_HOME = "/home/user";
const DEFAULT_MEMORY_BYTES = 2 * 1024 ** 3;

export function createMachinePool(options: MachinePoolOptions): MachinePool {
  const docker = options.docker ?? new Docker({ socketPath: "/var/run/docker.sock" });
  const prefix = options.labelPrefix ?? "rakazo-emulator";
  const labels = { [`${prefix}.emulator`]: options.emulator, [`${prefix}.owner`]: options.owner };

  const statusOf = (error: unknown) => (error as { statusCode?: number } | null)?.statusCode;

  return {
    async create(name, template) {
      const spec = machineSpec(options.image, options.templates, template);
      const container = await docker.createContainer({
        name: `${prefix}-${options.emulator}-${name}`,
        Image: spec.image,
        Cmd: spec.cmd,
        User: "1000:1000",
        WorkingDir: MACHINE_HOME,
        Hostname: name,
        Env: ["HOME=/home/user", "LANG=C.UTF-8"],
        Labels: labels,
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: "none",
          Memory: options.memoryBytes ?? DEFAULT_MEMORY_BYTES,
          MemorySwap: options.memoryBytes ?? DEFAULT_MEMORY_BYTES,
          NanoCpus: 2_000_000_000,
          PidsLimit: 4096,
          ShmSize: 256 * 1024 ** 2,
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          RestartPolicy: { Name: "no" },
          // /run/rakazo is where the supervisor keeps its sockets; on a real VM it is the
          // machine's own tmpfs.
          Tmpfs: { "/run/rakazo": "rw,mode=1777" },
        },
      });
      try {
        await container.start();
      } catch (error) {
        await container.remove({ force: true }).catch(() => undefined);
        throw error;
      }
      return container.id;
    },
    async start(containerId) {
      try {
        await docker.getContainer(containerId).start();
      } catch (error) {
        if (statusOf(error) !== 304) throw error;
      }
    },
    async stop(containerId) {
      try {
        await docker.getContainer(containerId).stop({ t: 1 });
      } catch (error) {
        if (statusOf(error) !== 304) throw error;
      }
    },
    async remove(containerId) {
      try {
        await docker.getContainer(containerId).remove({ force: true, v: true });
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
      }
    },
    async state(containerId) {
      try {
        const info = await docker.getContainer(containerId).inspect();
        return info.State.Running ? "running" : "stopped";
      } catch (error) {
        if (statusOf(error) === 404) return "missing";
        throw error;
      }
    },
    exec(containerId, request) {
      return runExec(docker, containerId, {
        argv: ["bash", "-c", request.command],
        cwd: request.cwd ?? MACHINE_HOME,
        ...(request.env ? { env: request.env } : {}),
        ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
        ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
        ...(request.onStdout ? { onStdout: request.onStdout } : {}),
        ...(request.onStderr ? { onStderr: request.onStderr } : {}),
      });
    },
    async connectPort(containerId, port) {
      const exec = await docker.getContainer(containerId).exec({
        Cmd: ["socat", "STDIO", `TCP:127.0.0.1:${port}`],
        User: "1000:1000",
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      });
      const raw = (await exec.start({ hijack: true, stdin: true })) as unknown as Duplex;
      return bridge(raw);
    },
    async removeAll() {
      const containers = await docker.listContainers({
        all: true,
        filters: { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) },
      });
      for (const c of containers) {
        await docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .catch(() => undefined);
      }
    },
  };
}

/**
 * Docker multiplexes an exec's stdout and stderr into one framed stream; a port connection
 * wants plain bytes both ways. Writes go straight to the exec's stdin, reads are demuxed
 * stdout (socat's stderr is dropped).
 */
function bridge(raw: Duplex): Duplex {
  const inbound = new PassThrough();
  const demux = createDemuxer((kind, data) => {
    if (kind === "stdout") inbound.push(Buffer.from(data));
  });
  raw.on("data", (chunk: Buffer) => demux.push(chunk));
  raw.on("end", () => inbound.push(null));
  raw.on("close", () => inbound.push(null));
  raw.on("error", (error) => inbound.destroy(error));
  const duplex: Duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void) {
      raw.write(chunk, done);
    },
    final(done: (error?: Error | null) => void) {
      // Half-close: Docker passes EOF on to socat's stdin.
      (raw as unknown as { end(): void }).end();
      done();
    },
    destroy(error: Error | null, done: (error?: Error | null) => void) {
      raw.destroy();
      done(error);
    },
  });
  inbound.on("data", (chunk: Buffer) => duplex.push(chunk));
  inbound.on("end", () => duplex.push(null));
  inbound.on("error", (error) => duplex.destroy(error));
  return duplex;
}
