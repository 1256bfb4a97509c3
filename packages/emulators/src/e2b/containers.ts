/**
 * The emulator's machines: one Docker container of the computer image per sandbox, with
 * `--network none` (only loopback), run as the image's workspace user. Commands run through
 * `docker exec`; a hosted port is reached through a `socat` relay started by `docker exec`
 * inside the container, since nothing outside can route into it.
 */
import { Duplex, PassThrough, type Readable, Writable } from "node:stream";
import Docker from "dockerode";
import { type EmulatedTemplates, machineSpec } from "../templates.ts";

export interface ContainerOptions {
  readonly docker: Docker;
  readonly image: string;
  /** Labels on every container (e.g. the test's branch), plus `rakazo-emulator.sandbox`. */
  readonly labels: Readonly<Record<string, string>>;
  /** Templates by name (./templates.ts): an image of their own and a boot command. */
  readonly templates?: EmulatedTemplates;
}

export interface RunningProcess {
  /** The process's pid on the Docker host (for signals). */
  readonly hostPid: Promise<number>;
  readonly exitCode: Promise<number>;
  write(data: Uint8Array): void;
  closeStdin(): void;
}

const WORKSPACE_USER = "1000:1000";

export function createContainers(options: ContainerOptions) {
  const { docker } = options;

  return {
    async create(
      sandboxId: string,
      envs: Readonly<Record<string, string>>,
      template?: string,
    ): Promise<string> {
      const spec = machineSpec(options.image, options.templates, template);
      const container = await docker.createContainer({
        Image: spec.image,
        name: `rakazo-emu-${sandboxId}`,
        Entrypoint: ["/usr/bin/tini", "--"],
        Cmd: spec.cmd,
        User: WORKSPACE_USER,
        WorkingDir: "/home/user",
        Env: Object.entries({ HOME: "/home/user", LANG: "C.UTF-8", ...envs }).map(([k, v]) => `${k}=${v}`),
        Labels: { ...options.labels, "rakazo-emulator.sandbox": sandboxId },
        HostConfig: {
          NetworkMode: "none",
          ShmSize: 256 * 1024 ** 2,
          CapDrop: ["ALL"],
          SecurityOpt: ["no-new-privileges"],
          Memory: 2 * 1024 ** 3,
          PidsLimit: 2048,
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

    pause: (id: string) => docker.getContainer(id).pause(),
    unpause: (id: string) => docker.getContainer(id).unpause(),
    remove: (id: string) => docker.getContainer(id).remove({ force: true, v: true }),

    /** Starts a process; output arrives demultiplexed on `onStdout`/`onStderr`. */
    async start(
      id: string,
      request: {
        readonly argv: readonly string[];
        readonly env?: Readonly<Record<string, string>>;
        readonly cwd?: string;
        readonly stdin: boolean;
        readonly onStdout: (data: Buffer) => void;
        readonly onStderr: (data: Buffer) => void;
      },
    ): Promise<RunningProcess> {
      const exec = await docker.getContainer(id).exec({
        Cmd: [...request.argv],
        Env: Object.entries(request.env ?? {}).map(([k, v]) => `${k}=${v}`),
        WorkingDir: request.cwd || "/home/user",
        User: WORKSPACE_USER,
        AttachStdin: request.stdin,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      });
      const stream = await exec.start({ hijack: true, stdin: request.stdin });
      const sink = (deliver: (data: Buffer) => void) =>
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            deliver(chunk);
            done();
          },
        });
      docker.modem.demuxStream(stream, sink(request.onStdout), sink(request.onStderr));
      const ended = new Promise<void>((resolve) => {
        stream.on("end", resolve);
        stream.on("close", resolve);
        stream.on("error", () => resolve());
      });
      if (!request.stdin) stream.end();
      const inspectPid = async (): Promise<number> => {
        for (let i = 0; i < 100; i++) {
          const info = await exec.inspect();
          if (info.Pid) return info.Pid;
          if (!info.Running && info.ExitCode !== null) return 0;
          await new Promise((r) => setTimeout(r, 20));
        }
        return 0;
      };
      const exitCode = ended.then(async () => {
        for (let i = 0; i < 100; i++) {
          const info = await exec.inspect();
          if (!info.Running && info.ExitCode !== null) return info.ExitCode;
          await new Promise((r) => setTimeout(r, 20));
        }
        return -1;
      });
      return {
        hostPid: inspectPid(),
        exitCode,
        write: (data) => void stream.write(data),
        closeStdin: () => stream.end(),
      };
    },

    /** Runs to completion, collecting output (file routes). */
    async run(
      id: string,
      argv: readonly string[],
      input?: Uint8Array,
    ): Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }> {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const proc = await this.start(id, {
        argv,
        stdin: input !== undefined,
        onStdout: (d) => out.push(d),
        onStderr: (d) => err.push(d),
      });
      if (input !== undefined) {
        proc.write(input);
        proc.closeStdin();
      }
      const exitCode = await proc.exitCode;
      return { exitCode, stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
    },

    /** A byte stream to `127.0.0.1:<port>` inside the container, through a socat relay. */
    async connectPort(id: string, port: number): Promise<Duplex> {
      const exec = await docker.getContainer(id).exec({
        Cmd: ["socat", "STDIO", `TCP:127.0.0.1:${port}`],
        User: WORKSPACE_USER,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      });
      const stream = await exec.start({ hijack: true, stdin: true });
      const readable = new PassThrough();
      const stderr = new PassThrough();
      stderr.resume();
      docker.modem.demuxStream(stream, readable, stderr);
      stream.on("end", () => readable.end());
      stream.on("error", (error: Error) => readable.destroy(error));
      return Duplex.from({ readable: readable as Readable, writable: stream as unknown as Writable });
    },
  };
}

export type Containers = ReturnType<typeof createContainers>;

export function defaultDocker(): Docker {
  return new Docker({ socketPath: "/var/run/docker.sock" });
}
