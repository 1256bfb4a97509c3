// Remote cold start on a template that carries the supervisor (packages/sandbox/src/remote/
// supervisor-start.ts), through the real e2b SDK against the emulator, whose templates can boot
// with a command of their own: a stock template gets the upload and a daemon of the uploaded
// bundle; a template whose image carries this very bundle and starts it at boot gets no upload
// and keeps its daemon; a template carrying a tampered bundle (and running it) gets the upload
// and its daemon replaced — the sha256 check decides, not the presence of a file.
import { randomBytes } from "node:crypto";
import { bakeTemplateImage } from "@rakazo/emulators";
import { type E2BEmulator, startE2BEmulator } from "@rakazo/emulators/e2b";
import type { SandboxProvider } from "@rakazo/sandbox";
import { createE2BProvider } from "@rakazo/sandbox/e2b-family";
import { daemonFlags, supervisorBootCommand } from "@rakazo/sandbox/remote";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("remote cold start on templates");

const API_KEY = `emu_${randomBytes(12).toString("hex")}`;
const LABELS = { "rakazo-test.suite": "remote-cold-start", "rakazo-test.owner": `cold-${process.pid}` };
const IMAGE_BUNDLE = "/opt/rakazo/supervisor.mjs";
const TAMPERED = "/home/user/tampered-supervisor.mjs";
/** What the runtime passes its daemons on E2B (remote-provider.ts defaults). */
const SETTINGS = {
  runDir: "/home/user/.rakazo/run",
  workspace: "/home/user/rakazo-home",
  gatewayPort: 8790,
  screenLimit: 0,
  admissionEnv: [],
};

let bundle: Promise<Uint8Array> | undefined;
const supervisorBundle = () => {
  bundle ??= bundleSupervisor().then((b) => new Uint8Array(Buffer.from(b.text)));
  return bundle;
};

/** Every supervisor daemon in the machine: `pid<TAB>argv after node`. */
async function daemons(provider: SandboxProvider, ref: string): Promise<string[]> {
  const result = await provider.sandbox(ref).exec({
    argv: [
      "sh",
      "-c",
      // Processes whose argv is `node <bundle> serve …`: pid, then argv after node.
      'for p in /proc/[0-9]*; do [ "$(tr "\\0" "\\n" < $p/cmdline 2>/dev/null | sed -n 3p)" = serve ] || continue; printf "%s\\t%s\\n" "$(basename $p)" "$(tr "\\0" " " < $p/cmdline | cut -d" " -f2-)"; done',
    ],
  });
  return result.stdout.split("\n").filter(Boolean);
}

async function uploadedBundles(provider: SandboxProvider, ref: string): Promise<string[]> {
  const result = await provider
    .sandbox(ref)
    .exec({ argv: ["sh", "-c", "ls ~/.rakazo/ | grep '^supervisor-' || true"] });
  return result.stdout.split("\n").filter(Boolean);
}

describe.skipIf(gate.skip)(gate.title, () => {
  let emulator: E2BEmulator;
  const made: [SandboxProvider, string][] = [];
  const provider = (template: string, supervisorInImage?: string) =>
    createE2BProvider({
      apiKey: API_KEY,
      apiUrl: emulator.url,
      sandboxUrl: emulator.url,
      domain: emulator.domain,
      portUrlTemplate: emulator.portUrlTemplate,
      supervisorBundle,
      template,
      ...(supervisorInImage ? { supervisorInImage } : {}),
    });
  const provision = async (p: SandboxProvider) => {
    const { ref } = await p.provision({
      computerId: `c-${randomBytes(4).toString("hex")}`,
      homeKey: "h",
      mode: "private",
    });
    made.push([p, ref]);
    return ref;
  };

  let template: Awaited<ReturnType<typeof bakeTemplateImage>> | undefined;

  beforeAll(async () => {
    // The template an operator builds: the computer image with this checkout's bundle baked in.
    template = await bakeTemplateImage({
      baseImage: COMPUTER_IMAGE,
      tag: `rakazo-test-template:cold-${process.pid}`,
      files: { [IMAGE_BUNDLE]: await supervisorBundle() },
    });
    const image = template.image;
    const tamper = `cp ${IMAGE_BUNDLE} ${TAMPERED} && echo '// not the host bundle' >> ${TAMPERED}`;
    const boot = supervisorBootCommand({ ...SETTINGS, bundlePath: IMAGE_BUNDLE });
    const tamperedBoot = supervisorBootCommand({ ...SETTINGS, bundlePath: TAMPERED });
    emulator = await startE2BEmulator({
      flavor: "e2b",
      image: COMPUTER_IMAGE,
      apiKey: API_KEY,
      labels: LABELS,
      templates: {
        "rakazo-supervisor": { image, boot },
        "rakazo-bundle-only": { image },
        "rakazo-tampered": { image, boot: ["sh", "-c", `${tamper} && exec "$@"`, "sh", ...tamperedBoot] },
      },
    });
  }, 120_000);

  afterAll(async () => {
    for (const [p, ref] of made) await p.destroy(ref).catch(() => undefined);
    await emulator?.close();
    await template?.remove();
  }, 120_000);

  it("a stock template gets the upload and a daemon of the uploaded bundle", async () => {
    const p = provider("desktop");
    const ref = await provision(p);
    expect(await uploadedBundles(p, ref)).toHaveLength(1);
    const running = await daemons(p, ref);
    expect(running).toHaveLength(1);
    expect(running[0] ?? "").toContain("/home/user/.rakazo/supervisor-");
    expect(await p.sandbox(ref).desktop?.list()).toEqual([]);
  }, 120_000);

  it("a template carrying this bundle and starting it at boot gets no upload and keeps its daemon", async () => {
    const p = provider("rakazo-supervisor", IMAGE_BUNDLE);
    const ref = await provision(p);
    expect(await uploadedBundles(p, ref)).toEqual([]);
    const running = await daemons(p, ref);
    expect(running).toHaveLength(1);
    // The boot command's daemon (pid of the container's first process, under tini).
    expect(running[0] ?? "").toMatch(
      new RegExp(`^\\d+\\t${IMAGE_BUNDLE} serve ${daemonFlags(SETTINGS).join(" ")} $`),
    );
    // The channel opens with the key the start printed.
    expect(await p.sandbox(ref).desktop?.list()).toEqual([]);
  }, 120_000);

  it("a template carrying this bundle without a boot command gets no upload and a daemon of the image's copy", async () => {
    const p = provider("rakazo-bundle-only", IMAGE_BUNDLE);
    const ref = await provision(p);
    expect(await uploadedBundles(p, ref)).toEqual([]);
    const running = await daemons(p, ref);
    expect(running).toHaveLength(1);
    expect(running[0] ?? "").toContain(`${IMAGE_BUNDLE} serve`);
  }, 120_000);

  it("a template carrying a tampered bundle gets the upload, and its running daemon is replaced", async () => {
    const p = provider("rakazo-tampered", TAMPERED);
    const ref = await provision(p);
    expect(await uploadedBundles(p, ref)).toHaveLength(1);
    const running = await daemons(p, ref);
    expect(running).toHaveLength(1);
    expect(running[0] ?? "").toContain("/home/user/.rakazo/supervisor-");
    expect(running.join("\n")).not.toContain(TAMPERED);
    expect(await p.sandbox(ref).desktop?.list()).toEqual([]);
  }, 120_000);
});
