// On a real Docker computer, through the whole control plane: the space's Team Computer
// is provisioned by its first use (CMP-1); a bot's Chromium killed with SIGKILL comes back on the
// next observe with both of its tabs and their cookies, and the page tools read the visible one
// (CMP-6); gh's credential and a pipx-installed tool from one machine are there after the
// computer is replaced and restored, because tool state lives under the persistent home (PRV-5,
// PER-1); the image ships pipx always and uv exactly when its manifest says so.

import { createProvider } from "@rakazo/sandbox";
import { requireDocker } from "@rakazo/sandbox/testing";
import { snapshotPage } from "@rakazo/services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { createTestSystem, eventually, type TestSystem } from "../support/system.ts";

const gate = await requireDocker("the Team Computer on Docker");

const PORT = 18_766;
const TAB_ONE = `one=${Math.random().toString(36).slice(2, 10)}`;
const TAB_TWO = `two=${Math.random().toString(36).slice(2, 10)}`;
const WORKSPACE = "/home/user/rakazo-home";
/** Chromium commits cookie changes to its profile every 30 s; a SIGKILL loses what is newer. */
const COOKIE_COMMIT_MS = 30_000;

// /one and /two each set a persistent cookie and are never cached (so a restored tab asks the
// server again); every request is logged as "<path> <Cookie header>".
const FIXTURE_SERVER = `
const http = require("node:http");
const fs = require("node:fs");
const cookies = { "/one": "${TAB_ONE}", "/two": "${TAB_TWO}" };
http.createServer((req, res) => {
  fs.appendFileSync("/tmp/fixture.log", req.url + " " + (req.headers.cookie ?? "-") + "\\n");
  const headers = { "content-type": "text/html", "cache-control": "no-store" };
  if (cookies[req.url]) headers["set-cookie"] = cookies[req.url] + "; Max-Age=86400; Path=/";
  res.writeHead(200, headers);
  res.end("<title>tab " + req.url + "</title><h1>" + req.url + "</h1>");
}).listen(${PORT}, "127.0.0.1");
`;

describe.skipIf(gate.skip)(gate.title, () => {
  let system: TestSystem;
  let tenant: Awaited<ReturnType<TestSystem["newTenant"]>>;
  let computerId: string;
  const caller = () => ({ userId: tenant.userId, tokenId: tenant.tokenId });

  beforeAll(async () => {
    system = await createTestSystem({
      provider: (dataDir) => createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir }),
    });
    await system.startWorker();
    tenant = await system.newTenant("team-docker");
    const listed = await system.rpc("computer/list", { spaceId: tenant.spaceId }, tenant.token);
    computerId = listed.json.result[0].id;
  }, 60_000);

  afterAll(async () => {
    if (!system) return;
    const row = await computerRow();
    await system.rpc("computer/delete", { computerId }, tenant.token);
    await eventually(
      async () => ((await computerRow())?.state === "deleted" ? true : undefined),
      60_000,
    ).catch(() => {});
    if (row?.providerRef) await system.provider.destroy(row.providerRef).catch(() => {});
    await system.close();
  }, 120_000);

  const computerRow = () =>
    system.ctx.db.query.computers.findFirst({ where: (c, { eq }) => eq(c.id, computerId) });

  const exec = async (script: string) => {
    const res = await system.rpc("computer/exec", { computerId, argv: ["bash", "-c", script] }, tenant.token);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const result = res.json.result as { exitCode: number; stdout: string; stderr: string };
    expect(result.exitCode, `${script}\n${result.stderr}`).toBe(0);
    return result.stdout;
  };

  /** `computer/*` and `run/start` get the computer's id; other calls take the body as is. */
  const rpc = async (name: string, body: Record<string, unknown>) => {
    const withId = name.startsWith("computer/") || name === "run/start" ? { computerId, ...body } : body;
    const res = await system.rpc(name, withId, tenant.token);
    expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
    return res.json.result;
  };

  const fixtureLog = async () => exec("cat /tmp/fixture.log 2>/dev/null || true");
  /** Waits for a request of `path` in the fixture log; returns its Cookie header. */
  const requested = (path: string) =>
    eventually(async () => {
      const line = (await fixtureLog()).split("\n").find((l) => l.startsWith(`${path} `));
      return line?.slice(path.length + 1);
    }, 60_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: no ${path} in the fixture log:\n${await fixtureLog()}`);
    });

  it("is provisioned by its first use, and a bot's shell starts in its folder", async () => {
    expect((await computerRow())?.state).toBe("unprovisioned");
    const { run, lease } = await rpc("run/start", { botId: tenant.botId });
    const pwd = await system.rpc(
      "computer/exec",
      { computerId, argv: ["pwd"], lease: { botId: tenant.botId, fencingToken: lease.fencingToken } },
      tenant.token,
    );
    expect(pwd.json.result?.stdout).toBe(`${WORKSPACE}/bots/${tenant.botId}\n`);
    expect((await computerRow())?.state).toBe("running");
    await rpc("run/complete", { runId: run.id, fencingToken: lease.fencingToken });
  }, 180_000);

  it("a bot's killed Chromium comes back with both tabs and their cookies", async () => {
    await exec(`setsid -f node -e '${FIXTURE_SERVER}' >/tmp/fixture.out 2>&1 </dev/null`);
    await eventually(async () => {
      const res = await system.rpc(
        "computer/exec",
        {
          computerId,
          argv: ["node", "-e", `fetch("http://127.0.0.1:${PORT}/ping").then(()=>0,()=>process.exit(1))`],
        },
        tenant.token,
      );
      return res.json.result?.exitCode === 0 ? true : undefined;
    });

    const observed = await rpc("computer/observe", { botId: tenant.botId });
    const open = async (first: unknown[], path: string) =>
      rpc("computer/act", {
        botId: tenant.botId,
        actions: [
          ...first,
          { type: "key", keys: "ctrl+l" },
          { type: "type", text: `http://127.0.0.1:${PORT}${path}` },
          { type: "key", keys: "Delete" },
          { type: "key", keys: "Return" },
        ],
      });
    await open([], "/one");
    expect(await requested("/one")).toBe("-");
    // A second tab; the new-tab page takes a moment to take the keyboard.
    await open(
      [
        { type: "key", keys: "ctrl+t" },
        { type: "wait", ms: 1_500 },
      ],
      "/two",
    );
    expect(await requested("/two")).toBe(TAB_ONE);

    // Let Chromium commit the session and the cookies to the profile, as it does on its own.
    await new Promise((done) => setTimeout(done, COOKIE_COMMIT_MS + 5_000));
    const browserPid = (
      await exec(
        `ps -eo pid=,args= | grep -- '--user-data-dir=' | grep -v -- '--type=' | grep -v grep | awk '{print $1}'`,
      )
    ).trim();
    expect(browserPid).toMatch(/^\d+$/);
    await exec(`: > /tmp/fixture.log; kill -9 ${browserPid}`);
    await eventually(async () =>
      (await exec(`kill -0 ${browserPid} 2>/dev/null || echo gone`)).trim() ? true : undefined,
    );

    // Observing again brings the browser back; the restored tabs ask the server with both cookies.
    const again = await rpc("computer/observe", { botId: tenant.botId });
    expect(again.slot).toEqual(observed.slot);
    const cookiesOf = (header: string) => header.split("; ").sort();
    expect(cookiesOf(await requested("/one"))).toEqual([TAB_ONE, TAB_TWO].sort());
    expect(cookiesOf(await requested("/two"))).toEqual([TAB_ONE, TAB_TWO].sort());
    const newPid = (
      await exec(
        `ps -eo pid=,args= | grep -- '--user-data-dir=' | grep -v -- '--type=' | grep -v grep | awk '{print $1}'`,
      )
    ).trim();
    expect(newPid).toMatch(/^\d+$/);
    expect(newPid).not.toBe(browserPid);

    // Two tabs, and the page tools read the visible one (the last opened, /two).
    const tabs = await exec(
      `node -e 'fetch("http://127.0.0.1:${9300 + observed.slot.index}/json/list").then(r=>r.json()).then(t=>console.log(t.filter(x=>x.type==="page").map(x=>new URL(x.url).pathname).sort().join(" ")))'`,
    );
    expect(tabs.trim()).toBe("/one /two");
    const { run, lease } = await rpc("run/start", { botId: tenant.botId });
    const snapshot = await snapshotPage(system.ctx, caller(), {
      computerId,
      botId: tenant.botId,
      fencingToken: lease.fencingToken,
    });
    expect(new URL(snapshot.url).pathname).toBe("/two");
    await rpc("run/complete", { runId: run.id, fencingToken: lease.fencingToken });
  }, 240_000);

  it("gh's credential and the tool caches live under the home and survive a replacement", async () => {
    // The image says what it ships (/opt/rakazo/manifest.json, written by its build path): pipx
    // always, uv only from the registry build (Dockerfile). The machine must match that claim,
    // and so must the tools list the API reports.
    const manifest = JSON.parse(await exec("cat /opt/rakazo/manifest.json")) as {
      build: string;
      tools: string[];
    };
    expect(["offline", "registry"]).toContain(manifest.build);
    expect(manifest.tools).toContain("pipx");
    const claimsUv = manifest.tools.includes("uv");
    expect(claimsUv).toBe(manifest.build === "registry");
    for (const tool of ["gh", "pandoc", "pdftotext", "pipx", "python3", "uv"]) {
      const found = (await exec(`command -v ${tool} >/dev/null && echo yes || echo no`)).trim() === "yes";
      expect(found, `${tool} in a ${manifest.build} image`).toBe(manifest.tools.includes(tool));
    }
    // The first read of a machine not probed yet may answer null (the probe goes on; the next has it).
    await expect
      .poll(async () => (await rpc("computer/get", {})).tools, { timeout: 15_000, interval: 200 })
      .toEqual(["gh", ...(claimsUv ? ["uv"] : []), "pandoc", "pdftotext", "python3"]);

    const env = await exec(
      "env | grep -E '^(GH_CONFIG_DIR|UV_TOOL_DIR|UV_CACHE_DIR|PIP_CACHE_DIR|PIPX_HOME|HISTFILE)=' | sort",
    );
    expect(env.trim().split("\n")).toEqual([
      `GH_CONFIG_DIR=${WORKSPACE}/.config/gh`,
      `HISTFILE=${WORKSPACE}/.bash_history`,
      `PIPX_HOME=${WORKSPACE}/.local/share/pipx`,
      `PIP_CACHE_DIR=${WORKSPACE}/.cache/pip`,
      `UV_CACHE_DIR=${WORKSPACE}/.cache/uv`,
      `UV_TOOL_DIR=${WORKSPACE}/.local/share/uv/tools`,
    ]);

    // A credential as `gh auth login` stores it without a keyring, and a setting via gh itself;
    // where gh would put them with no GH_CONFIG_DIR if the environment did not say.
    await exec(
      [
        // gh's own rule: GH_CONFIG_DIR, else ~/.config/gh.
        `dir="$\{GH_CONFIG_DIR:-$HOME/.config/gh}"`,
        'mkdir -p "$dir"',
        `printf 'github.com:\\n    oauth_token: gho_rakazo_test_token\\n    user: rakazo\\n    git_protocol: https\\n' > "$dir/hosts.yml"`,
        "gh config set editor nano",
      ].join(" && "),
    );
    expect((await exec("gh auth token")).trim()).toBe("gho_rakazo_test_token");

    // A Python tool installed with pipx, offline (the computer has no network): a wheel made here.
    await exec(
      [
        "python3 - <<'PY'",
        "import zipfile",
        'info = "hello_rakazo-1.0.dist-info"',
        "files = {",
        '  "hello_rakazo.py": "def main():\\n    print(\'hello from pipx\')\\n",',
        '  info + "/METADATA": "Metadata-Version: 2.1\\nName: hello-rakazo\\nVersion: 1.0\\n",',
        '  info + "/WHEEL": "Wheel-Version: 1.0\\nGenerator: rakazo-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",',
        '  info + "/entry_points.txt": "[console_scripts]\\nhello-rakazo = hello_rakazo:main\\n",',
        "}",
        'files[info + "/RECORD"] = "".join(p + ",,\\n" for p in [*files, info + "/RECORD"])',
        'with zipfile.ZipFile("/tmp/hello_rakazo-1.0-py3-none-any.whl", "w") as wheel:',
        "  for path, text in files.items(): wheel.writestr(path, text)",
        "PY",
        "pipx install --pip-args=--no-index /tmp/hello_rakazo-1.0-py3-none-any.whl",
      ].join("\n"),
    );
    expect((await exec("hello-rakazo")).trim()).toBe("hello from pipx");
    expect((await exec("command -v hello-rakazo")).trim()).toBe(`${WORKSPACE}/.local/bin/hello-rakazo`);

    // Replace the machine: stop (checkpoint), destroy the container, start a new one.
    await rpc("computer/stop", {});
    const stopped = await eventually(async () => {
      const row = await computerRow();
      return row?.state === "stopped" ? row : undefined;
    }, 90_000);
    if (!stopped.providerRef) throw new Error("the stopped computer has no container ref");
    await system.provider.destroy(stopped.providerRef);
    await rpc("computer/start", {});
    const restarted = await eventually(async () => {
      const row = await computerRow();
      return row?.state === "running" ? row : undefined;
    }, 90_000);
    expect(restarted.providerRef).not.toBe(stopped.providerRef);

    expect((await exec("gh auth token")).trim()).toBe("gho_rakazo_test_token");
    expect((await exec("gh config get editor")).trim()).toBe("nano");
    // The pipx tool and its environment came back with the home (PIPX_HOME, PIPX_BIN_DIR).
    expect((await exec("hello-rakazo")).trim()).toBe("hello from pipx");
    expect((await exec("pipx list --short")).trim()).toBe("hello-rakazo 1.0");
  }, 300_000);
});
