/**
 * A browser cookie as a restore check (PRV-3, PER-2, PER-7): a page served inside the machine
 * (a tiny Node server on loopback — the machines have no network) sets a cookie in a bot's page
 * browser; after the checkpoint is restored onto a replacement, the same bot's browser sends it
 * back. The server logs each request's path and Cookie header to /tmp/fixture.log, which the
 * test reads with a command. Shared by the remote-provider suites (E2B, Novita, Boat).
 */
import { randomBytes } from "node:crypto";
import type { Sandbox } from "@rakazo/sandbox";
import { eventually } from "./system.ts";

const PORT = 18_766;

export interface CookieFixture {
  /** `name=value` the page sets. */
  readonly cookie: string;
  /** Serves the page in the machine and has `bot`'s browser visit `/set`. */
  plant(sandbox: Sandbox, bot: string): Promise<void>;
  /** Serves the page again and returns the Cookie header `bot`'s browser sends to `/check`. */
  read(sandbox: Sandbox, bot: string): Promise<string>;
}

export function browserCookieFixture(): CookieFixture {
  const cookie = `rkz=${randomBytes(5).toString("hex")}`;
  const server = `
const http = require("node:http");
const fs = require("node:fs");
http.createServer((req, res) => {
  fs.appendFileSync("/tmp/fixture.log", req.url + " " + (req.headers.cookie ?? "-") + "\\n");
  const headers = { "content-type": "text/html" };
  if (req.url === "/set") headers["set-cookie"] = "${cookie}; Max-Age=86400; Path=/; SameSite=Lax";
  res.writeHead(200, headers);
  res.end("<title>fixture</title><h1>" + req.url + "</h1>");
}).listen(${PORT}, "127.0.0.1");
`;
  /** (Re)starts the server from the workspace, visits `path`, returns the Cookie header it saw. */
  const visit = async (sandbox: Sandbox, bot: string, path: string) => {
    await sandbox.files.write("fixture.js", server);
    await sandbox.exec({
      argv: ["sh", "-c", "rm -f /tmp/fixture.log; nohup node fixture.js >/dev/null 2>&1 & sleep 1"],
    });
    if (!sandbox.pageBrowser) throw new Error("this sandbox has no page browser");
    await sandbox.pageBrowser.navigate(bot, `http://127.0.0.1:${PORT}${path}`);
    return eventually(async () => {
      const log = (await sandbox.exec({ argv: ["sh", "-c", "cat /tmp/fixture.log 2>/dev/null || true"] }))
        .stdout;
      return log
        .split("\n")
        .find((line) => line.startsWith(`${path} `))
        ?.slice(path.length + 1);
    }, 60_000);
  };
  return {
    cookie,
    async plant(sandbox, bot) {
      await visit(sandbox, bot, "/set");
    },
    read: (sandbox, bot) => visit(sandbox, bot, "/check"),
  };
}
