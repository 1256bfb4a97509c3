/**
 * A page served inside a computer that sets cookies, visited by a bot's desktop Chromium through
 * the control plane (computer/observe, computer/act), as the check that a browser profile came
 * through a checkpoint and a replacement (PER-2, PER-7). A tiny Node server on the computer's
 * loopback (the machines have no network) sets `cookies[path]` on a visit of `path` and logs
 * "<path> <Cookie header>" per request to /tmp/fixture.log, which is read with computer/exec.
 * Any provider: the page and the calls are the same on Docker and on a remote computer.
 */
import type { TestSystem } from "./system.ts";
import { eventually } from "./system.ts";

export interface CookiePage {
  /** `bash -c script` on the computer; its stdout (throws unless it exits 0). */
  exec(script: string): Promise<string>;
  /** Starts the page's server in the computer (again after a replacement) and waits for it. */
  start(): Promise<void>;
  /**
   * Opens `path` in the bot's Chromium and returns the Cookie header the page saw ("-" for
   * none). `fencingToken`: the bot's run's, while a run drives it.
   */
  visit(path: string, fencingToken?: number): Promise<string>;
}

export function cookiePage(
  system: TestSystem,
  options: {
    readonly computerId: string;
    readonly botId: string;
    readonly token: string;
    readonly port: number;
    /** `name=value` set on a visit of each path (persistent, a day). */
    readonly cookies: Readonly<Record<string, string>>;
  },
): CookiePage {
  const { computerId, botId, token, port } = options;
  const server = `
const http = require("node:http");
const fs = require("node:fs");
const cookies = ${JSON.stringify(options.cookies)};
http.createServer((req, res) => {
  fs.appendFileSync("/tmp/fixture.log", req.url + " " + (req.headers.cookie ?? "-") + "\\n");
  const headers = { "content-type": "text/html" };
  if (cookies[req.url]) headers["set-cookie"] = cookies[req.url] + "; Max-Age=86400; Path=/; SameSite=Lax";
  res.writeHead(200, headers);
  res.end("<title>fixture</title><h1>" + req.url + "</h1>");
}).listen(${port}, "127.0.0.1");
`;
  const ok = (res: { status: number; json: any }, what: string) => {
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  };
  const exec = async (script: string) => {
    const res = await system.rpc("computer/exec", { computerId, argv: ["bash", "-c", script] }, token);
    const result = ok(res, script).result as { exitCode: number; stdout: string; stderr: string };
    if (result.exitCode !== 0) throw new Error(`${script} exited ${result.exitCode}: ${result.stderr}`);
    return result.stdout;
  };
  const fenced = (fencingToken?: number) => (fencingToken === undefined ? {} : { fencingToken });
  return {
    exec,
    async start() {
      const source = Buffer.from(server).toString("base64");
      await exec(
        `echo ${source} | base64 -d > /tmp/fixture.js && setsid -f node /tmp/fixture.js >/tmp/fixture.out 2>&1 </dev/null`,
      );
      await eventually(async () => {
        const res = await system.rpc(
          "computer/exec",
          {
            computerId,
            argv: ["node", "-e", `fetch("http://127.0.0.1:${port}/ping").then(()=>0,()=>process.exit(1))`],
          },
          token,
        );
        return res.json.result?.exitCode === 0 ? true : undefined;
      });
    },
    /**
     * Typing into the omnibox is retried: on a loaded host a restored browser (its last session
     * reopening) can swallow the first attempt, and what is under test is the cookie it sends.
     */
    async visit(path, fencingToken) {
      // observe brings the bot's desktop (and its Chromium) up.
      ok(
        await system.rpc("computer/observe", { computerId, botId, ...fenced(fencingToken) }, token),
        "observe",
      );
      const requested = () =>
        eventually(async () => {
          const log = await exec("cat /tmp/fixture.log 2>/dev/null || true");
          return log
            .split("\n")
            .find((line) => line.startsWith(`${path} `))
            ?.slice(path.length + 1);
        }, 15_000);
      for (let attempt = 1; ; attempt += 1) {
        const actions = [
          { type: "key", keys: "ctrl+l" },
          { type: "type", text: `http://127.0.0.1:${port}${path}` },
          { type: "key", keys: "Return" },
        ];
        ok(
          await system.rpc("computer/act", { computerId, botId, actions, ...fenced(fencingToken) }, token),
          "act",
        );
        try {
          return await requested();
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
    },
  };
}
