/**
 * The supervisor as an artifact (CMP-8): one bundled file that imports Node builtins
 * only, is exactly what the image build stages, holds no test, bench or testing code, and runs
 * as both daemon and command path.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSupervisor, type SupervisorBundle } from "./bundle.ts";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const IMAGE_DIR = path.join(REPO, "infra/sandboxes/image");
const run = promisify(execFile);

/** Every module specifier the bundle's code still imports or requires. */
function specifiers(code: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /^\s*import\s[^;]*?\sfrom\s*["']([^"']+)["']/gm,
    /^\s*import\s*["']([^"']+)["']/gm,
    /^\s*export\s[^;]*?\sfrom\s*["']([^"']+)["']/gm,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.add(match[1] as string);
  return [...found].sort();
}

let bundle: SupervisorBundle;
let root: string;

beforeAll(async () => {
  bundle = await bundleSupervisor();
  root = mkdtempSync(path.join(tmpdir(), "rakazo-bundle-test-"));
}, 60_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("supervisor.mjs", () => {
  it("imports Node builtins only, each by its node: name", () => {
    const output = Object.values(bundle.metafile.outputs)[0];
    expect(output).toBeDefined();
    for (const imported of output?.imports ?? []) {
      expect(imported.external, imported.path).toBe(true);
      expect(imported.path, imported.path).toMatch(/^node:[a-z_/]+$/);
    }
    const found = specifiers(bundle.text);
    expect(found.length).toBeGreaterThan(3);
    expect(found.filter((s) => !s.startsWith("node:"))).toEqual([]);
    // No way around the static imports: no createRequire, no dynamic require.
    expect(bundle.text).not.toMatch(/\bcreateRequire\b/);
    expect(bundle.text).not.toMatch(/\brequire\(\s*[^"'\s)]/);
  });

  it("is built from the supervisor, protocol, page-helper and zod, and from no test, bench or testing file", () => {
    const inputs = Object.keys(bundle.metafile.inputs);
    expect(inputs).toContain("infra/sandboxes/supervisor/src/daemon/entry.ts");
    expect(inputs.some((f) => f.startsWith("packages/protocol/src/"))).toBe(true);
    expect(inputs.some((f) => f.startsWith("packages/page-helper/src/"))).toBe(true);
    const shipped = inputs.filter((f) => /\.(test|bench)\.ts$|\/testing\/|vitest|esbuild/.test(f));
    expect(shipped).toEqual([]);
    const outside = inputs.filter(
      (f) =>
        !f.startsWith("infra/sandboxes/supervisor/src/") &&
        !f.startsWith("packages/protocol/src/") &&
        !f.startsWith("packages/page-helper/src/") &&
        !/node_modules\/(\.pnpm\/zod@[^/]+\/node_modules\/)?zod\//.test(f),
    );
    expect(outside).toEqual([]);
  });

  it("is the only supervisor file the image build stages, byte for byte", () => {
    const staged = path.join(root, "stage");
    execFileSync("bash", [path.join(IMAGE_DIR, "build.sh"), "--stage-supervisor", staged], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    expect(readdirSync(staged, { recursive: true })).toEqual(["supervisor.mjs"]);
    expect(readFileSync(path.join(staged, "supervisor.mjs"), "utf8")).toBe(bundle.text);
  }, 60_000);

  it("is all the registry Dockerfile copies of the supervisor", () => {
    const dockerfile = readFileSync(path.join(IMAGE_DIR, "Dockerfile"), "utf8");
    const sources = [...dockerfile.matchAll(/^COPY\s+(?!--from)(\S+)\s+\S+$/gm)].map((m) => m[1]);
    expect(sources).toEqual([
      "infra/sandboxes/image/packages.txt",
      "infra/sandboxes/supervisor/dist/supervisor.mjs",
      "infra/sandboxes/image/customize.sh",
    ]);
    expect(dockerfile).toContain('CMD ["node", "/opt/rakazo/supervisor.mjs", "serve"]');
  });

  it("runs as command path and daemon, validating params with the protocol's table", async () => {
    const file = path.join(root, "supervisor.mjs");
    writeFileSync(file, bundle.text);
    const runDir = path.join(root, "run");
    const flags = [
      `--run-dir=${runDir}`,
      `--workspace=${path.join(root, "home")}`,
      `--log-dir=${path.join(root, "logs")}`,
      "--gateway-listen=off",
      "--cgroup-root=off",
    ];
    const call = async (method: string, params: unknown) => {
      const result = await run(process.execPath, [file, method, JSON.stringify(params), ...flags]).catch(
        (error: { stdout?: string; code?: number }) => ({ stdout: error.stdout ?? "", code: error.code }),
      );
      return JSON.parse(result.stdout.trim());
    };
    try {
      // The first call starts `node supervisor.mjs serve` detached, then answers through it.
      const health = await call("health", {});
      expect(health).toMatchObject({ ok: true, result: { ok: true, live: 0 } });
      const daemonPid = Number(readFileSync(path.join(runDir, "supervisor.pid"), "utf8"));
      expect(daemonPid).not.toBe(process.pid);
      expect(readFileSync(`/proc/${daemonPid}/cmdline`, "utf8").split("\0")).toEqual(
        expect.arrayContaining([file, "serve"]),
      );
      expect(await call("desktop.list", {})).toEqual({ ok: true, result: [] });
      expect(await call("desktop.setControlled", { botId: "b", controlled: "yes" })).toMatchObject({
        ok: false,
        error: { code: "INVALID_ACTION", message: expect.stringContaining("controlled") },
      });
      expect(await call("no.such", {})).toMatchObject({
        ok: false,
        error: { code: "SANDBOX_PROVIDER_ERROR" },
      });
    } finally {
      // Stop the daemon this test started (its pid file names it), and only it.
      const pid = Number(readFileSync(path.join(runDir, "supervisor.pid"), "utf8").trim() || "0");
      if (pid > 0) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // Already gone.
        }
      }
    }
  }, 60_000);
});
