/**
 * The fake computer's shell: a handful of coreutils over the workspace folder, enough for
 * tests that exec commands. Anything else exits 127, as a real shell would.
 */
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { relative, resolve } from "node:path";

export interface FakeCommandContext {
  readonly workspace: string;
  readonly cwd: string;
  readonly stdin: Buffer;
  readonly env: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  readonly write: (stream: "stdout" | "stderr", data: string) => void;
}

type Command = (args: string[], ctx: FakeCommandContext) => Promise<number>;

function inside(ctx: FakeCommandContext, path: string): string | undefined {
  const target = resolve(ctx.cwd, path);
  const rel = relative(ctx.workspace, target);
  return rel.startsWith("..") ? undefined : target;
}

const commands: Record<string, Command> = {
  async echo(args, ctx) {
    const noNewline = args[0] === "-n";
    const words = noNewline ? args.slice(1) : args;
    ctx.write("stdout", words.join(" ") + (noNewline ? "" : "\n"));
    return 0;
  },
  async true() {
    return 0;
  },
  async false() {
    return 1;
  },
  async pwd(_args, ctx) {
    ctx.write("stdout", `${ctx.cwd}\n`);
    return 0;
  },
  async cat(args, ctx) {
    if (args.length === 0) {
      ctx.write("stdout", ctx.stdin.toString("utf8"));
      return 0;
    }
    let code = 0;
    for (const arg of args) {
      const path = inside(ctx, arg);
      try {
        if (!path) throw new Error("outside");
        ctx.write("stdout", await readFile(path, "utf8"));
      } catch {
        ctx.write("stderr", `cat: ${arg}: No such file or directory\n`);
        code = 1;
      }
    }
    return code;
  },
  async ls(args, ctx) {
    const targets = args.filter((a) => !a.startsWith("-"));
    let code = 0;
    for (const arg of targets.length ? targets : ["."]) {
      const path = inside(ctx, arg);
      try {
        if (!path) throw new Error("outside");
        const info = await stat(path);
        const names = info.isDirectory() ? (await readdir(path)).sort() : [arg];
        if (names.length) ctx.write("stdout", `${names.join("\n")}\n`);
      } catch {
        ctx.write("stderr", `ls: cannot access '${arg}': No such file or directory\n`);
        code = 2;
      }
    }
    return code;
  },
  async mkdir(args, ctx) {
    for (const arg of args.filter((a) => !a.startsWith("-"))) {
      const path = inside(ctx, arg);
      if (!path) return 1;
      await mkdir(path, { recursive: true });
    }
    return 0;
  },
  async rm(args, ctx) {
    for (const arg of args.filter((a) => !a.startsWith("-"))) {
      const path = inside(ctx, arg);
      if (!path) return 1;
      await rm(path, { recursive: true, force: true });
    }
    return 0;
  },
  async env(_args, ctx) {
    for (const [key, value] of Object.entries(ctx.env)) ctx.write("stdout", `${key}=${value}\n`);
    return 0;
  },
  async sleep(args, ctx) {
    const seconds = Number(args[0] ?? "0");
    await new Promise<void>((done) => {
      const timer = setTimeout(done, seconds * 1000);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        done();
      });
    });
    return 0;
  },
  async sh(args, ctx) {
    // Only `sh -c 'exit N'` — enough to test exit codes without pretending to be a shell.
    const match = args[0] === "-c" ? /^\s*exit\s+(\d+)\s*$/.exec(args[1] ?? "") : null;
    if (match) return Number(match[1]);
    ctx.write("stderr", "fake sh: only `sh -c 'exit N'` is supported\n");
    return 2;
  },
};

export async function runFakeCommand(argv: readonly string[], ctx: FakeCommandContext): Promise<number> {
  const [name, ...args] = argv;
  const command = name === undefined ? undefined : commands[name];
  if (!command) {
    ctx.write("stderr", `${name ?? ""}: command not found\n`);
    return 127;
  }
  return command(args, ctx);
}
