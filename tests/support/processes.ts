/** Real child processes for fault tests: started in their own process group, killed with -9. */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { eventually } from "./system.ts";

const root = join(import.meta.dirname, "../..");

export interface Child {
  readonly process: ChildProcess;
  readonly output: string[];
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** Starts `script` (repo-relative) with only PATH, HOME and `env`. */
export function startChild(script: string, env: Record<string, string>): Child {
  const output: string[] = [];
  const child = spawn(process.execPath, [join(root, script)], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdio: "pipe",
    detached: true,
  });
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  return { process: child, output };
}

/** kill -9 of the child and everything it started (its process group); waits for the exit. */
export async function killHard(child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise((done) => child.process.once("exit", done));
  try {
    process.kill(-(child.process.pid as number), "SIGKILL");
  } catch {
    return;
  }
  await exited;
}

/** A test worker process (tests/support/worker-process.ts), once it says it started. */
export async function startTestWorker(env: Record<string, string>): Promise<Child> {
  const child = startChild("tests/support/worker-process.ts", env);
  await eventually(async () => {
    if (child.process.exitCode !== null) throw new Error(`worker exited early:\n${child.output.join("")}`);
    return child.output.join("").includes('"msg":"worker.started"') || undefined;
  }, 30_000);
  return child;
}
