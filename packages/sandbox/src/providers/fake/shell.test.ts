// TRM-8: the fake shell's line discipline on its own — editing keys, quoting and expansion,
// `;`, Ctrl-C, typed-ahead input and Ctrl-D — over the fake's real emulated commands.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeShell } from "./shell.ts";

let workspace: string;
beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), "rakazo-fake-shell-"));
});
afterAll(() => rm(workspace, { recursive: true, force: true }));

function shell() {
  let output = "";
  const exits: number[] = [];
  const sh = new FakeShell({
    workspace,
    cwd: workspace,
    env: { NAME: "world" },
    pid: 4321,
    output: (text) => {
      output += text;
    },
    exit: (code) => exits.push(code),
  });
  return { sh, exits, output: () => output };
}

describe("the fake shell (TRM-8)", () => {
  it("edits the line: backspace erases, arrows are ignored, Ctrl-C abandons it", async () => {
    const { sh, output } = shell();
    sh.input("echo hx\x7fi\x1b[D\r");
    await expect.poll(output).toBe("rakazo:~$ echo hx\b \bi\r\nhi\r\nrakazo:~$ ");
    sh.input("echo never\x03");
    expect(output().endsWith("echo never^C\r\nrakazo:~$ ")).toBe(true);
  });

  it("quotes, expands $$ and $NAME (not inside single quotes), runs `;` in order, keeps typed-ahead input", async () => {
    const { sh, output } = shell();
    sh.input(`echo "a  b" '$NAME' $NAME $$ a\\ b; echo second\recho third\r`);
    await expect
      .poll(output)
      .toMatch(/a {2}b \$NAME world 4321 a b\r\nsecond\r\nrakazo:~\$ echo third\r\nthird\r\n/);
  });

  it("Ctrl-C stops a running command; Ctrl-D on an empty line and `exit n` end the shell with a status", async () => {
    const { sh, output, exits } = shell();
    sh.input("sleep 30\r");
    sh.input("\x03");
    await expect.poll(output).toMatch(/sleep 30\r\n\^C\r\nrakazo:~\$ $/);
    sh.input("\x04");
    expect(exits).toEqual([0]);
    const other = shell();
    other.sh.input("false; exit\r");
    await expect.poll(() => other.exits).toEqual([1]);
  });
});
