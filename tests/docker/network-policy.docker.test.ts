// A computer under each network policy, on this machine only. The test makes an
// `--internal` Docker network (no route out) holding two fixture web servers (`allowed.test`,
// `blocked.test`) and passes it to the provider as the egress proxies' upstream network, so the
// only "internet" any computer here can meet is those fixtures. A listener on the network's
// gateway address (the host's side of the bridge) stands in for the API; Postgres' port is
// tried on the same address; 169.254.169.254 is tried everywhere. Under every policy the
// computer itself has no interface but `lo`; under egress/allowlist its way out is its egress
// proxy. No packet is addressed outside this machine: the fixtures sit on an internal network
// and the proxy refuses the metadata address before dialling anything. One test gives the host
// a new address (11.22.33.44 on a bridge interface of its own that stays down, so no traffic
// ever uses it) after provision; the proxy must refuse it without dialling. The data dir's
// host-address watcher must go with the last proxy: afterAll fails the suite if one is left.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProvider, type NetworkPolicy, type Sandbox, type SandboxProvider } from "@rakazo/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE, DOCKER_RUNTIME, dockerUnavailable } from "../support/docker.ts";
import { buildSupervisorOverlay } from "../support/supervisor-overlay.ts";

const unavailable = await dockerUnavailable();
if (unavailable) {
  if (process.env.CI === "true") throw new Error(`network-policy.docker: ${unavailable}`);
  console.log(`network-policy.docker: skipped, ${unavailable}`);
}

const tag = randomBytes(4).toString("hex");
const NETWORK = `rakazo-nettest-${tag}`;
// The computer's interfaces from /proc/net/dev: `ls /sys/class/net` fails under gVisor 2022-12
// (coreutils' statx, docs/security.md).
const INTERFACES = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";
const LABEL = `rakazo-nettest=${tag}`;
const FIXTURE_PORT = 8080;
const ALLOWED = `http://allowed.test:${FIXTURE_PORT}/`;
const BLOCKED = `http://blocked.test:${FIXTURE_PORT}/`;
const METADATA = "http://169.254.169.254/latest/meta-data/";

const docker = (...args: string[]): string =>
  execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** The IPv4 address of a host interface, or undefined when it has none. */
function hostIpv4(name: string): string | undefined {
  try {
    const [link] = JSON.parse(execFileSync("ip", ["-j", "addr", "show", name], { encoding: "utf8" })) as {
      addr_info: { family: string; local: string }[];
    }[];
    return link?.addr_info.find((entry) => entry.family === "inet")?.local;
  } catch {
    return undefined;
  }
}

/** A fixture web server on the internal network, answering `marker` on every path. */
function startFixture(image: string, alias: string, marker: string): void {
  const server = `import http.server as h\nclass H(h.BaseHTTPRequestHandler):\n  def do_GET(s):\n    b=b"<html><head><title>${marker}</title></head><body><h1>${marker}</h1></body></html>"\n    s.send_response(200);s.send_header("content-type","text/html");s.send_header("content-length",str(len(b)));s.end_headers();s.wfile.write(b)\nh.HTTPServer(("0.0.0.0",${FIXTURE_PORT}),H).serve_forever()`;
  docker(
    "run",
    "-d",
    "--rm",
    "--label",
    LABEL,
    "--name",
    `rakazo-nettest-${alias.replace(/\W/g, "-")}-${tag}`,
    "--network",
    NETWORK,
    "--network-alias",
    alias,
    "--user",
    "1000:1000",
    "--cap-drop",
    "ALL",
    image,
    "python3",
    "-c",
    server,
  );
}

describe.skipIf(unavailable !== undefined)(`network policies under Docker (${DOCKER_RUNTIME})`, () => {
  let overlay: ReturnType<typeof buildSupervisorOverlay> | undefined;
  let provider: SandboxProvider;
  let dataDir = "";
  let subnet = "";
  let gateway = "";
  let hostApi: Server;
  let hostApiPort = 0;
  let hostApiHits = 0;
  const refs: string[] = [];
  /** Data dirs of providers made by tests; each one's watcher must be gone at the end. */
  const dataDirs: string[] = [];

  beforeAll(async () => {
    overlay = buildSupervisorOverlay(COMPUTER_IMAGE);
    try {
      docker("run", "--rm", "--network", "none", overlay.image, "sh", "-c", "command -v curl");
    } catch {
      throw new Error(`${COMPUTER_IMAGE} has no curl: rebuild it (infra/sandboxes/image/build.sh)`);
    }
    docker("network", "create", "--internal", "--label", LABEL, NETWORK);
    const ipam = JSON.parse(docker("network", "inspect", "-f", "{{json .IPAM.Config}}", NETWORK)) as {
      Subnet: string;
      Gateway?: string;
    }[];
    subnet = ipam[0]?.Subnet ?? "";
    gateway = ipam[0]?.Gateway ?? "";
    expect(subnet, "the internal network has a subnet").not.toBe("");
    expect(gateway, "the internal network has a gateway on the host").not.toBe("");
    startFixture(overlay.image, "allowed.test", "ALLOWED-FIXTURE");
    startFixture(overlay.image, "blocked.test", "BLOCKED-FIXTURE");
    // The stand-in for the API: listens on the host's own address on this network only.
    hostApi = createServer((_req, res) => {
      hostApiHits += 1;
      res.end("HOST-API");
    });
    await new Promise<void>((resolve) => hostApi.listen(0, gateway, resolve));
    hostApiPort = (hostApi.address() as AddressInfo).port;
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-nettest-"));
    dataDirs.push(dataDir);
    provider = await createProvider({
      kind: "docker",
      image: overlay.image,
      dataDir,
      runtime: DOCKER_RUNTIME,
      egressNetwork: NETWORK,
      // The fixtures' range is opened explicitly, as an operator would open a private range;
      // the host's address inside it must stay refused.
      egressPrivateAllow: [subnet],
    });
    console.error(`network-policy: network ${NETWORK} ${subnet} gateway ${gateway}, data dir ${dataDir}`);
  }, 240_000);

  afterAll(async () => {
    for (const ref of refs) await provider?.destroy(ref).catch(() => undefined);
    // With every computer destroyed, no data dir may keep its host-address watcher.
    const watchers = dataDirs.flatMap((dir) =>
      docker("ps", "-aq", "--filter", `label=rakazo.host-addresses=${join(dir, "run", "host-addresses")}`)
        .split("\n")
        .filter(Boolean),
    );
    const leftovers = [...docker("ps", "-aq", "--filter", `label=${LABEL}`).split("\n"), ...watchers].filter(
      Boolean,
    );
    if (leftovers.length > 0) docker("rm", "-f", ...leftovers);
    try {
      docker("network", "rm", NETWORK);
    } catch (error) {
      console.error(`network-policy: could not remove ${NETWORK}: ${(error as Error).message}`);
    }
    hostApi?.close();
    overlay?.remove();
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    expect(watchers, "host-address watchers left after every computer was destroyed").toEqual([]);
  }, 120_000);

  const computer = async (name: string, network: NetworkPolicy): Promise<Sandbox> => {
    const computerId = `cmp_net${name}${tag}`;
    const { ref } = await provider.provision({
      computerId,
      homeKey: `home_${computerId}`,
      mode: "team",
      network,
    });
    refs.push(ref);
    return provider.sandbox(ref);
  };

  /** `curl` in the computer: body + status, or the failure. Extra args e.g. `--proxytunnel`. */
  const curl = async (sandbox: Sandbox, url: string, ...args: string[]): Promise<string> => {
    const result = await sandbox.exec({
      argv: ["curl", "-sS", "-m", "8", ...args, "-w", " [HTTP %{http_code}]", url],
      timeoutMs: 20_000,
    });
    return `${result.stdout}${result.stderr} (exit ${result.exitCode})`;
  };

  /** What the bot's Chromium shows for `url` (page tools on the visible browser). */
  const browse = async (sandbox: Sandbox, botId: string, url: string): Promise<string> => {
    const page = sandbox.pageBrowser;
    if (!page) throw new Error("the Docker provider wires page tools");
    try {
      const nav = await page.navigate(botId, url);
      const snap = await page.snapshot(botId);
      return `${nav.title} ${snap.text} [status ${nav.status ?? "?"}]`;
    } catch (error) {
      return `navigate failed: ${(error as Error).message}`;
    }
  };

  /** The host's API port, Postgres' port and the metadata address, through every path out. */
  const expectHostUnreachable = async (sandbox: Sandbox) => {
    const targets = [`http://${gateway}:${hostApiPort}/`, `http://${gateway}:5432/`, METADATA];
    for (const target of targets) {
      for (const args of [[], ["--proxytunnel"], ["--noproxy", "*"]]) {
        const out = await curl(sandbox, target, ...args);
        expect(out, `${target} ${args.join(" ")}`).not.toContain("HOST-API");
        // Refused by the egress proxy (403) or no connection at all (000): nothing answered.
        expect(out, `${target} ${args.join(" ")}`).toMatch(/\[HTTP (403|000)\]/);
      }
    }
    expect(hostApiHits, "connections that reached the host's API stand-in").toBe(0);
  };

  it("none: the computer is exactly as isolated as before, and reaches nothing", async () => {
    const sandbox = await computer("none", { mode: "none" });
    const ifaces = await sandbox.exec({
      argv: ["sh", "-c", `${INTERFACES}; env | grep -ci proxy || true`],
    });
    expect(ifaces.stdout.trim().split("\n")).toEqual(["lo", "0"]);
    expect(await curl(sandbox, ALLOWED)).not.toContain("ALLOWED-FIXTURE");
    expect(await curl(sandbox, BLOCKED)).not.toContain("BLOCKED-FIXTURE");
    expect(await browse(sandbox, "bot-none", ALLOWED)).not.toContain("ALLOWED-FIXTURE");
    await expectHostUnreachable(sandbox);
    expect(docker("ps", "-a", "--filter", `label=rakazo.egress-of=cmp_netnone${tag}`, "-q")).toBe("");
  }, 240_000);

  it("allowlist: curl and Chromium reach the listed host only", async () => {
    const sandbox = await computer("allow", {
      mode: "allowlist",
      allow: [{ host: "allowed.test", ports: [FIXTURE_PORT] }],
    });
    const ifaces = await sandbox.exec({ argv: ["sh", "-c", INTERFACES] });
    expect(ifaces.stdout.trim()).toBe("lo");
    expect(await curl(sandbox, ALLOWED)).toContain("ALLOWED-FIXTURE");
    expect(await curl(sandbox, ALLOWED, "--proxytunnel")).toContain("ALLOWED-FIXTURE");
    const blocked = await curl(sandbox, BLOCKED);
    expect(blocked).not.toContain("BLOCKED-FIXTURE");
    expect(blocked).toContain("[HTTP 403]");
    expect(await curl(sandbox, BLOCKED, "--proxytunnel")).not.toContain("BLOCKED-FIXTURE");
    // Not around the proxy either: the computer has no route of its own.
    expect(await curl(sandbox, ALLOWED, "--noproxy", "*")).not.toContain("ALLOWED-FIXTURE");
    expect(await browse(sandbox, "bot-allow", ALLOWED)).toContain("ALLOWED-FIXTURE");
    expect(await browse(sandbox, "bot-allow", BLOCKED)).not.toContain("BLOCKED-FIXTURE");
    await expectHostUnreachable(sandbox);
  }, 240_000);

  it("egress: public-equivalent fixtures are reachable, the host and metadata are not", async () => {
    const sandbox = await computer("egress", { mode: "egress" });
    expect(await curl(sandbox, ALLOWED)).toContain("ALLOWED-FIXTURE");
    expect(await curl(sandbox, BLOCKED, "--proxytunnel")).toContain("BLOCKED-FIXTURE");
    expect(await browse(sandbox, "bot-egress", BLOCKED)).toContain("BLOCKED-FIXTURE");
    expect(await browse(sandbox, "bot-egress", `http://${gateway}:${hostApiPort}/`)).not.toContain(
      "HOST-API",
    );
    await expectHostUnreachable(sandbox);
  }, 240_000);

  it("the proxy refuses an address the host gained after provision", async () => {
    const sandbox = await computer("hostgain", { mode: "egress" });
    const iface = `rk-${tag}`;
    const gained = "11.22.33.44";
    const watcherFile = join(dataDir, "run", "host-addresses", "addresses.json");
    const before = await readFile(watcherFile, "utf8");
    expect(before, "the watcher runs and lists the host's addresses").toContain("127.0.0.1/32");
    // docker0 has no carrier while no container uses it, which os.networkInterfaces() skips.
    const docker0 = hostIpv4("docker0");
    if (docker0) expect(before, "docker0's address is listed too").toContain(`"${docker0}/32"`);
    expect(before).not.toContain(gained);
    try {
      execFileSync("ip", ["link", "add", iface, "type", "bridge"]);
      execFileSync("ip", ["addr", "add", `${gained}/32`, "dev", iface]);
    } catch (error) {
      if (process.env.CI === "true") throw error;
      console.log(`network-policy: cannot add an interface here (${(error as Error).message}); skipped`);
      return;
    }
    try {
      const started = Date.now();
      while (!(await readFile(watcherFile, "utf8")).includes(`"${gained}/32"`)) {
        expect(Date.now() - started, "the watcher sees the new address").toBeLessThan(10_000);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      console.error(`network-policy: the watcher listed ${gained} after ${Date.now() - started} ms`);
      // The proxy looks at the file at most once a second.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const forwarded = await curl(sandbox, `http://${gained}:${FIXTURE_PORT}/`);
      expect(forwarded).toContain("(address_host)");
      expect(forwarded).toContain("[HTTP 403]");
      const tunnelled = await curl(sandbox, `http://${gained}:${FIXTURE_PORT}/`, "--proxytunnel", "-v");
      expect(tunnelled).toMatch(/X-Rakazo-Egress: address_host/i);
    } finally {
      execFileSync("ip", ["link", "del", iface]);
    }
  }, 240_000);

  it("a stopped computer started under another policy gets a machine and proxy that match it", async () => {
    const computerId = `cmp_netchange${tag}`;
    const first = await provider.provision({
      computerId,
      homeKey: `home_${computerId}`,
      mode: "team",
      network: { mode: "none" },
    });
    refs.push(first.ref);
    await provider.stop(first.ref);
    const second = await provider.provision({
      computerId,
      homeKey: `home_${computerId}`,
      mode: "team",
      ref: first.ref,
      network: { mode: "allowlist", allow: [{ host: "allowed.test", ports: [FIXTURE_PORT] }] },
    });
    refs.push(second.ref);
    expect(second.ref).not.toBe(first.ref);
    expect(await curl(provider.sandbox(second.ref), ALLOWED)).toContain("ALLOWED-FIXTURE");
    await provider.stop(second.ref);
    expect(
      docker("ps", "--filter", `label=rakazo.egress-of=${computerId}`, "-q"),
      "the proxy stops with its computer",
    ).toBe("");
    await provider.destroy(second.ref);
    expect(
      docker("ps", "-a", "--filter", `label=rakazo.egress-of=${computerId}`, "-q"),
      "and goes with it",
    ).toBe("");
  }, 240_000);

  it("the host-address watcher runs while a proxy of its data dir runs, and goes with the last one", async () => {
    // A provider of its own: the other tests' computers keep the shared data dir's watcher.
    const ownDir = await mkdtemp(join(tmpdir(), "rakazo-nettest-watcher-"));
    dataDirs.push(ownDir);
    const events: string[] = [];
    const own = await createProvider(
      {
        kind: "docker",
        image: overlay?.image ?? COMPUTER_IMAGE,
        dataDir: ownDir,
        runtime: DOCKER_RUNTIME,
        // The same internal network and opened fixture range as the suite's provider.
        egressNetwork: NETWORK,
        egressPrivateAllow: [subnet],
      },
      { log: (event) => events.push(event.event) },
    );
    const watcherDir = join(ownDir, "run", "host-addresses");
    const name = `rakazo-host-addresses-${createHash("sha256").update(watcherDir).digest("hex").slice(0, 8)}`;
    /** The watcher's state as `docker ps -a` shows it by name: "" when there is none. */
    const watcher = () => docker("ps", "-a", "--filter", `name=^${name}$`, "--format", "{{.State}}");
    const provisioned: string[] = [];
    const provision = async (suffix: string, network: NetworkPolicy, ref?: string) => {
      const computerId = `cmp_netwatch${suffix}${tag}`;
      const result = await own.provision({
        computerId,
        homeKey: `home_${computerId}`,
        mode: "team",
        network,
        ...(ref ? { ref } : {}),
      });
      provisioned.push(result.ref);
      return result.ref;
    };
    const allowlist: NetworkPolicy = {
      mode: "allowlist",
      allow: [{ host: "allowed.test", ports: [FIXTURE_PORT] }],
    };
    try {
      const first = await provision("a", { mode: "egress" });
      const second = await provision("b", allowlist);
      expect(watcher(), "made at the first networked provision").toBe("running");

      await own.stop(first);
      expect(watcher(), "another computer's proxy still runs").toBe("running");
      await own.destroy(first);
      expect(watcher(), "another computer's proxy still needs it").toBe("running");

      await own.stop(second);
      expect(watcher(), "no proxy runs: stopped, kept for the stopped computer").toBe("exited");
      // SIGTERM (an engine shutdown sends the same) ends it with 0: `on-failure` then leaves it off.
      expect(docker("inspect", "-f", "{{.HostConfig.RestartPolicy.Name}} {{.State.ExitCode}}", name)).toBe(
        "on-failure 0",
      );
      const again = await provision("b", allowlist, second);
      expect(watcher(), "started again with the proxy").toBe("running");
      // The proxy refuses everything on a stale file: reaching the allowed host shows it fresh.
      expect(await curl(own.sandbox(again), ALLOWED)).toContain("ALLOWED-FIXTURE");

      await own.destroy(again);
      expect(watcher(), "gone with the data dir's last proxy").toBe("");
      expect(events).toContain("docker.egress.watcher_removed");
    } finally {
      for (const ref of provisioned) await own.destroy(ref).catch(() => undefined);
    }
  }, 300_000);
});
