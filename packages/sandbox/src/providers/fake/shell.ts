/**
 * The fake computer's interactive shell (TRM-8): a line discipline over the same emulated
 * commands `exec` runs (./commands.ts). It echoes what is typed, runs a line on Enter, prints
 * the output with CRLF line ends as a terminal would, and ends with an exit status on `exit`
 * or Ctrl-D. Builtins: `cd`, `exit [n]`, `stty size` (the last resize). Words are split on
 * blanks with '…', "…" and \ quoting; `$$` is the session's own pid and `$NAME` an env value;
 * `;` separates commands. Ctrl-C abandons the line or stops the running command.
 */
import { stat } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { runFakeCommand } from "./commands.ts";

export interface FakeShellOptions {
  readonly workspace: string;
  /** Absolute starting directory inside the workspace. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** This session's pid as `$$` shows it. */
  readonly pid: number;
  readonly output: (text: string) => void;
  readonly exit: (code: number) => void;
}

export class FakeShell {
  readonly #options: FakeShellOptions;
  #cwd: string;
  #line = "";
  #pending = "";
  #running: AbortController | undefined;
  #size = { cols: 80, rows: 24 };
  #ended = false;

  constructor(options: FakeShellOptions) {
    this.#options = options;
    this.#cwd = options.cwd;
    this.#prompt();
  }

  resize(cols: number, rows: number): void {
    this.#size = { cols, rows };
  }

  /** Ends the shell from outside (the session closed); a running command is stopped. */
  end(): void {
    this.#ended = true;
    this.#running?.abort();
  }

  input(text: string): void {
    if (this.#ended) return;
    if (this.#running) {
      // Typed ahead while a command runs: kept for after it, except Ctrl-C, which stops it.
      if (text.includes("\x03")) {
        this.#running.abort();
        this.#pending = "";
      } else this.#pending += text;
      return;
    }
    for (let i = 0; i < text.length; i += 1) {
      const ch = text[i] as string;
      if (ch === "\x1b") {
        // An escape sequence (arrows, function keys): skipped, there is no history to move in.
        if (text[i + 1] === "[") {
          i += 2;
          while (i < text.length && !/[@-~]/.test(text[i] as string)) i += 1;
        } else i += 1;
      } else if (ch === "\r" || ch === "\n") {
        if (ch === "\r" && text[i + 1] === "\n") i += 1;
        this.#options.output("\r\n");
        const line = this.#line;
        this.#line = "";
        this.#pending = text.slice(i + 1);
        void this.#run(line);
        return;
      } else if (ch === "\x7f" || ch === "\b") {
        if (this.#line.length > 0) {
          this.#line = this.#line.slice(0, -1);
          this.#options.output("\b \b");
        }
      } else if (ch === "\x03") {
        this.#line = "";
        this.#options.output("^C\r\n");
        this.#prompt();
      } else if (ch === "\x04") {
        if (this.#line === "") {
          this.#finish(0);
          return;
        }
      } else if (ch >= " ") {
        this.#line += ch;
        this.#options.output(ch);
      }
    }
  }

  #prompt(): void {
    const rel = relative(this.#options.workspace, this.#cwd);
    this.#options.output(`rakazo:~${rel ? `/${rel}` : ""}$ `);
  }

  #finish(code: number): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#options.exit(code);
  }

  async #run(line: string): Promise<void> {
    let status = 0;
    for (const command of line.split(";")) {
      const argv = this.#words(command);
      if (argv.length === 0) continue;
      if (argv[0] === "exit") {
        this.#finish(argv[1] === undefined ? status : Number(argv[1]) & 255);
        return;
      }
      const controller = new AbortController();
      this.#running = controller;
      try {
        status = await this.#command(argv, controller.signal);
      } finally {
        this.#running = undefined;
      }
      if (this.#ended) return;
      if (controller.signal.aborted) {
        this.#options.output("^C\r\n");
        status = 130;
        break;
      }
    }
    this.#prompt();
    const typedAhead = this.#pending;
    this.#pending = "";
    if (typedAhead) this.input(typedAhead);
  }

  async #command(argv: string[], signal: AbortSignal): Promise<number> {
    const print = (text: string) => this.#options.output(text.replace(/\r?\n/g, "\r\n"));
    if (argv[0] === "cd") {
      const target = resolve(this.#cwd, argv[1] ?? this.#options.workspace);
      const rel = relative(this.#options.workspace, target);
      const isDir = await stat(target).then(
        (info) => info.isDirectory(),
        () => false,
      );
      if (rel.startsWith("..") || !isDir) {
        print(`cd: ${argv[1]}: No such file or directory\n`);
        return 1;
      }
      this.#cwd = target;
      return 0;
    }
    if (argv[0] === "stty" && argv[1] === "size") {
      print(`${this.#size.rows} ${this.#size.cols}\n`);
      return 0;
    }
    return runFakeCommand(argv, {
      workspace: this.#options.workspace,
      cwd: this.#cwd,
      stdin: Buffer.alloc(0),
      env: this.#options.env,
      signal,
      write: (_stream, data) => print(data),
    });
  }

  /** Blank-separated words with quoting and `$` expansion (outside single quotes). */
  #words(command: string): string[] {
    const words: string[] = [];
    let word: string | undefined;
    let quote: "'" | '"' | undefined;
    for (let i = 0; i < command.length; i += 1) {
      const ch = command[i] as string;
      if (quote) {
        if (ch === quote) quote = undefined;
        else if (ch === "$" && quote === '"')
          i = this.#expand(command, i, (text) => (word = (word ?? "") + text));
        else word = (word ?? "") + ch;
      } else if (ch === "'" || ch === '"') {
        quote = ch;
        word ??= "";
      } else if (ch === "\\" && i + 1 < command.length) {
        i += 1;
        word = (word ?? "") + command[i];
      } else if (ch === "$") {
        i = this.#expand(command, i, (text) => (word = (word ?? "") + text));
      } else if (ch === " " || ch === "\t") {
        if (word !== undefined) words.push(word);
        word = undefined;
      } else word = (word ?? "") + ch;
    }
    if (word !== undefined) words.push(word);
    return words;
  }

  /** Expands the `$…` at `at`; returns the index of its last character. */
  #expand(command: string, at: number, append: (text: string) => void): number {
    if (command[at + 1] === "$") {
      append(String(this.#options.pid));
      return at + 1;
    }
    const match = /^\{?([A-Za-z_][A-Za-z0-9_]*)\}?/.exec(command.slice(at + 1));
    if (!match) {
      append("$");
      return at;
    }
    append(this.#options.env[match[1] as string] ?? "");
    return at + match[0].length;
  }
}
