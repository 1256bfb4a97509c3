/**
 * What each network policy makes of a computer's container and of its egress proxy's
 * container, without a Docker engine.
 */
import { describe, expect, it } from "vitest";
import type { NetworkPolicy } from "../../provider.ts";
import { containerCreateOptions, hostPaths, labelKeys } from "./container-spec.ts";
import {
  EGRESS_DIR,
  EGRESS_PROXY_URL,
  EGRESS_SOCKET,
  egressProxyCreateOptions,
  egressRules,
  HOST_ADDRESSES_DIR,
  hostWatcherCreateOptions,
  networkFingerprint,
} from "./network-spec.ts";

const paths = hostPaths("/var/lib/rakazo", "cmp_1", "home_1");
const computer = (network?: NetworkPolicy) =>
  containerCreateOptions({
    image: "rakazo-computer:test",
    computerId: "cmp_1",
    homeKey: "home_1",
    paths,
    labelPrefix: "rakazo",
    memoryBytes: 1024 ** 3,
    pidsLimit: 512,
    ...(network ? { network } : {}),
  });
const envOf = (options: { Env?: string[] }) =>
  Object.fromEntries(
    (options.Env ?? []).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );

const policies: Record<string, NetworkPolicy | undefined> = {
  default: undefined,
  none: { mode: "none" },
  egress: { mode: "egress" },
  allowlist: { mode: "allowlist", allow: [{ host: "allowed.test", ports: [80] }] },
};

describe("computer container under each policy", () => {
  it.each(Object.entries(policies))(
    "%s: no interface, no ports, no capabilities, no resolver",
    (_name, policy) => {
      const options = computer(policy);
      expect(options.NetworkDisabled).toBe(true);
      expect(options.HostConfig?.NetworkMode).toBe("none");
      expect(options.HostConfig?.PortBindings).toBeUndefined();
      expect(options.HostConfig?.PublishAllPorts).toBeUndefined();
      expect(options.ExposedPorts).toBeUndefined();
      expect(options.HostConfig?.Dns).toBeUndefined();
      expect(options.HostConfig?.ExtraHosts).toBeUndefined();
      expect(options.HostConfig?.CapDrop).toEqual(["ALL"]);
      expect(options.HostConfig?.CapAdd).toBeUndefined();
      expect(options.HostConfig?.SecurityOpt).toContain("no-new-privileges");
      expect(options.Labels?.[labelKeys("rakazo").network] ?? "none").toBe(networkFingerprint(policy));
    },
  );

  it("none (and the default) is exactly today's container: no proxy settings, no egress mount", () => {
    expect(computer(undefined)).toEqual(computer({ mode: "none" }));
    const env = envOf(computer({ mode: "none" }));
    for (const key of [
      "HTTP_PROXY",
      "HTTPS_PROXY",
      "http_proxy",
      "RAKAZO_BROWSER_PROXY",
      "RAKAZO_EGRESS_SOCKET",
    ]) {
      expect(env[key], key).toBeUndefined();
    }
    expect(computer({ mode: "none" }).HostConfig?.Mounts?.map((m) => m.Target)).not.toContain(EGRESS_DIR);
  });

  it.each(["egress", "allowlist"])(
    "%s: proxy env for tools and the browser, egress socket mounted read-only",
    (mode) => {
      const options = computer(policies[mode]);
      const env = envOf(options);
      expect(env).toMatchObject({
        HTTP_PROXY: EGRESS_PROXY_URL,
        HTTPS_PROXY: EGRESS_PROXY_URL,
        http_proxy: EGRESS_PROXY_URL,
        https_proxy: EGRESS_PROXY_URL,
        NO_PROXY: "localhost,127.0.0.1,::1",
        RAKAZO_BROWSER_PROXY: EGRESS_PROXY_URL,
        RAKAZO_EGRESS_SOCKET: EGRESS_SOCKET,
        RAKAZO_EGRESS_LISTEN: "127.0.0.1:3128",
      });
      expect(options.HostConfig?.Mounts).toContainEqual({
        Type: "bind",
        Source: paths.egressDir,
        Target: EGRESS_DIR,
        ReadOnly: true,
      });
    },
  );

  it("fingerprints change with the policy and not otherwise", () => {
    expect(networkFingerprint(undefined)).toBe("none");
    expect(networkFingerprint({ mode: "egress" })).not.toBe(
      networkFingerprint({ mode: "allowlist", allow: [] }),
    );
    const a = networkFingerprint({ mode: "allowlist", allow: [{ host: "a.test" }] });
    expect(networkFingerprint({ mode: "allowlist", allow: [{ host: "a.test" }] })).toBe(a);
    expect(networkFingerprint({ mode: "allowlist", allow: [{ host: "b.test" }] })).not.toBe(a);
  });
});

describe("egress proxy container", () => {
  const rules = egressRules(
    { mode: "allowlist", allow: [{ host: "allowed.test" }] },
    { privateAllow: ["172.30.0.0/16"], hostDeny: ["172.30.0.1"] },
  );
  const options = egressProxyCreateOptions({
    name: "rakazo-abc-egress",
    image: "rakazo-computer:test",
    labels: { "rakazo.egress-of": "cmp_1" },
    rules,
    network: "rakazo-egress",
    sourceDir: "/src/egress-proxy/",
    socketDir: paths.egressDir,
    hostAddressesDir: "/var/lib/rakazo/run/host-addresses",
  });

  it("runs on the upstream network as nobody, read-only, capabilities dropped, nothing published", () => {
    expect(options.HostConfig?.NetworkMode).toBe("rakazo-egress");
    expect(options.User).toBe("65534:65534");
    expect(options.HostConfig?.ReadonlyRootfs).toBe(true);
    expect(options.HostConfig?.CapDrop).toEqual(["ALL"]);
    expect(options.HostConfig?.SecurityOpt).toContain("no-new-privileges");
    expect(options.HostConfig?.PortBindings).toBeUndefined();
    expect(options.ExposedPorts).toBeUndefined();
    expect(options.HostConfig?.Memory).toBeGreaterThan(0);
    expect(options.HostConfig?.PidsLimit).toBeGreaterThan(0);
  });

  it("carries the rules, with the host's addresses denied, and mounts its sources read-only", () => {
    const env = envOf(options);
    expect(JSON.parse(env.RAKAZO_EGRESS_RULES as string)).toEqual({
      mode: "allowlist",
      allow: [{ host: "allowed.test" }],
      privateAllow: ["172.30.0.0/16"],
      hostDeny: ["172.30.0.1"],
    });
    expect(options.HostConfig?.Mounts).toContainEqual(
      expect.objectContaining({ Source: "/src/egress-proxy/", ReadOnly: true }),
    );
    expect(
      egressRules({ mode: "egress", allow: [{ host: "x.test" }] }, { privateAllow: [], hostDeny: [] }).allow,
    ).toEqual([]);
  });

  it("reads the host-address watcher's file through a read-only mount the computer does not have", () => {
    expect(envOf(options).RAKAZO_HOST_ADDRESSES).toBe(`${HOST_ADDRESSES_DIR}/addresses.json`);
    expect(options.HostConfig?.Mounts).toContainEqual({
      Type: "bind",
      Source: "/var/lib/rakazo/run/host-addresses",
      Target: HOST_ADDRESSES_DIR,
      ReadOnly: true,
    });
    for (const policy of Object.values(policies)) {
      const mounts = computer(policy).HostConfig?.Mounts ?? [];
      expect(mounts.map((m) => m.Target)).not.toContain(HOST_ADDRESSES_DIR);
      expect(mounts.map((m) => m.Source)).not.toContain("/var/lib/rakazo/run/host-addresses");
    }
  });
});

describe("host-address watcher container", () => {
  const options = hostWatcherCreateOptions({
    name: "rakazo-host-addresses-1234abcd",
    image: "rakazo-computer:test",
    labels: { "rakazo.host-addresses": "/var/lib/rakazo/run/host-addresses" },
    sourceDir: "/src/egress-proxy/",
    hostAddressesDir: "/var/lib/rakazo/run/host-addresses",
  });

  it("sees the host's interfaces, and nothing else: nobody, read-only, no capabilities, no ports", () => {
    expect(options.HostConfig?.NetworkMode).toBe("host");
    expect(options.User).toBe("65534:65534");
    expect(options.HostConfig?.ReadonlyRootfs).toBe(true);
    expect(options.HostConfig?.CapDrop).toEqual(["ALL"]);
    expect(options.HostConfig?.CapAdd).toBeUndefined();
    expect(options.HostConfig?.SecurityOpt).toContain("no-new-privileges");
    expect(options.HostConfig?.Privileged).toBeUndefined();
    expect(options.HostConfig?.PidMode).toBeUndefined();
    expect(options.HostConfig?.PortBindings).toBeUndefined();
    expect(options.HostConfig?.RestartPolicy).toEqual({ Name: "on-failure" });
    expect(options.Cmd).toEqual(["/opt/rakazo-egress/host-watch.ts"]);
    expect(options.HostConfig?.Mounts).toEqual([
      { Type: "bind", Source: "/src/egress-proxy/", Target: "/opt/rakazo-egress", ReadOnly: true },
      {
        Type: "bind",
        Source: "/var/lib/rakazo/run/host-addresses",
        Target: HOST_ADDRESSES_DIR,
        ReadOnly: false,
      },
    ]);
  });
});
