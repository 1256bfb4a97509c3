// A computer must never steer the host's connections or file access into
// another computer. Two real Docker computers: the attacker plants symlinks to the victim's
// sockets (supervisor, gateway) in its own run dir, and symlinks to the victim's files in its
// home; then every host-side path (observe/act through the supervised desktop, screens
// configure/target, stored-file reads, checkpoint) is exercised on the attacker's computer and
// must be refused — no desktop, no file, no key change in the victim, whose own screen
// capabilities and desktop keep working.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalAgentHomeStore } from "@rakazo/homes";
import { deriveScreenKey, newCapabilityId, sealCapability } from "@rakazo/protocol/capability";
import {
  createProvider,
  isSandboxError,
  type Sandbox,
  type ScreenGatewayTarget,
  type SupervisedDesktop,
} from "@rakazo/sandbox";
import { readAll } from "@rakazo/sandbox/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPUTER_IMAGE, DOCKER_RUNTIME, dockerUnavailable } from "../support/docker.ts";

const unavailable = await dockerUnavailable();
if (unavailable) {
  if (process.env.CI === "true") throw new Error(`host-boundary.docker: ${unavailable}`);
  console.log(`host-boundary.docker: skipped, ${unavailable}`);
}

const KID = "k1";

const TITLE = `a computer cannot steer the host into another computer (${DOCKER_RUNTIME})`;

describe.skipIf(unavailable !== undefined)(TITLE, () => {
  let dataDir: string;
  const provider = () =>
    createProvider({ kind: "docker", image: COMPUTER_IMAGE, dataDir, runtime: DOCKER_RUNTIME });
  let refs: string[] = [];
  const victimId = `cmp_victim_${randomBytes(4).toString("hex")}`;
  const attackerId = `cmp_attacker_${randomBytes(4).toString("hex")}`;
  let victim: Sandbox;
  let attacker: Sandbox;
  let victimKeyFile = "";
  let victimTicket = "";
  let victimSupervisor = "";
  let victimGateway = "";
  let victimFilesBefore = "";
  const victimMaster = randomBytes(32);
  const attackerMaster = randomBytes(32);

  const exec = async (sandbox: Sandbox, script: string) => {
    const result = await sandbox.exec({ argv: ["sh", "-c", script], timeoutMs: 30_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    return result.stdout;
  };
  /** The victim's desktops, asked through the command path (docker exec), not the host sockets. */
  /** Every path in the victim's home, except its browser profile's churn. */
  const victimFiles = () => exec(victim, "find . -path ./.browser-profiles -prune -o -print | sort");
  const victimBots = async () => {
    const out = await exec(victim, "rakazo-supervisor desktop.list '{}'");
    const answer = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as {
      result?: { botId: string }[];
    };
    return (answer.result ?? []).map((slot) => slot.botId).sort();
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "rakazo-boundary-"));
    const p = await provider();
    for (const [computerId] of [[victimId], [attackerId]] as const) {
      const { ref } = await p.provision({ computerId, homeKey: computerId, mode: "team", ref: null });
      refs.push(ref);
    }
    victim = p.sandbox(refs[0] as string);
    attacker = p.sandbox(refs[1] as string);
    console.error(`host-boundary: victim ${refs[0]}, attacker ${refs[1]}, data dir ${dataDir}`);

    // The victim works normally: a desktop, a configured gateway, a valid view ticket, a secret file.
    const victimDesktop = victim.desktop as SupervisedDesktop;
    await victimDesktop.observe("bot_victim");
    const gatewayKey = deriveScreenKey(victimMaster, "gateway", victimId).toString("base64");
    await victim.screens?.configure({ computerId: victimId, keys: [{ kid: KID, key: gatewayKey }] });
    const slot = (await victimDesktop.list()).find((s) => s.botId === "bot_victim");
    if (!slot) throw new Error("the victim's desktop is missing");
    const now = Date.now();
    victimTicket = sealCapability(deriveScreenKey(victimMaster, "gateway", victimId), KID, "gateway", {
      id: newCapabilityId(),
      computerId: victimId,
      botId: "bot_victim",
      slot: slot.slot.index,
      generation: slot.slot.generation,
      policy: "view",
      subject: "usr_victim",
      issuedAt: now,
      expiresAt: now + 10 * 60_000,
    });
    expect(await victim.screens?.check(victimTicket)).toEqual({ ok: true });
    await exec(
      victim,
      "echo victim-secret > secret.txt && mkdir -p private && echo deep > private/notes.txt",
    );
    victimFilesBefore = await victimFiles();

    // The attacker's computer knows the victim's host paths (mountinfo + the id's hash); here the
    // test simply finds them. Its own supervisor must be up before its sockets are replaced.
    const attackerDesktop = attacker.desktop as SupervisedDesktop;
    await attackerDesktop.list();
    const victimRun = join(dataDir, "run");
    const all = execFileSync("find", [victimRun, "-type", "s"], { encoding: "utf8" });
    const victimSlug = createHash("sha256").update(victimId).digest("hex").slice(0, 12);
    const victimSockets = all.split("\n").filter((p) => p.includes(`/run/${victimSlug}/`));
    victimSupervisor = victimSockets.find((p) => p.endsWith("/supervisor.sock")) ?? "";
    victimGateway = victimSockets.find((p) => p.endsWith("/gateway.sock")) ?? "";
    expect(victimSupervisor).not.toBe("");
    expect(victimGateway).not.toBe("");
    victimKeyFile = execFileSync("find", [join(victimRun, victimSlug), "-name", "gateway.key"], {
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean)[0] as string;
    expect(victimKeyFile).toBeTruthy();

    // -T: the name is replaced as it is, whatever it is; without it ln stats the name first, and
    // coreutils' statx(AT_NO_AUTOMOUNT) is EINVAL under gVisor 2022-12 (docs/security.md).
    await exec(
      attacker,
      [
        `ln -sfnT '${victimSupervisor}' /run/rakazo/supervisor.sock`,
        `ln -sfnT '${victimGateway}' /run/rakazo/gateway.sock`,
        `ln -sfnT '${join(dataDir, "homes", victimId, "secret.txt")}' stolen.txt`,
        `ln -sfnT '${join(dataDir, "homes", victimId, "private")}' stolen-dir`,
        "test -L /run/rakazo/supervisor.sock && test -L /run/rakazo/gateway.sock",
      ].join(" && "),
    );
  }, 240_000);

  afterAll(async () => {
    const p = await provider().catch(() => undefined);
    for (const ref of refs) await p?.destroy(ref).catch(() => undefined);
    refs = [];
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it("observe and act on the attacker's computer never reach the victim's supervisor", async () => {
    const desktop = attacker.desktop as SupervisedDesktop;
    const observed = await desktop.observe("bot_attacker").then(
      () => "answered",
      (error: unknown) => (isSandboxError(error) ? error.code : String(error)),
    );
    // Refused, or served by the attacker's own supervisor; never by the victim's.
    const acted = await desktop.act("bot_attacker", [{ type: "key", keys: "Return" }]).then(
      () => "answered",
      (error: unknown) => (isSandboxError(error) ? error.code : String(error)),
    );
    expect(await victimBots()).toEqual(["bot_victim"]);
    expect([observed, acted]).toEqual(["DESKTOP_UNAVAILABLE", "DESKTOP_UNAVAILABLE"]);
  });

  it("screens configure/target on the attacker's computer leave the victim's gateway alone", async () => {
    const before = await readFile(victimKeyFile, "utf8");
    const attackerKey = deriveScreenKey(attackerMaster, "gateway", attackerId).toString("base64");
    const configured = await attacker.screens
      ?.configure({ computerId: attackerId, keys: [{ kid: KID, key: attackerKey }] })
      .then(
        () => "answered",
        (error: unknown) => (isSandboxError(error) ? error.code : String(error)),
      );
    expect(configured).toBe("DESKTOP_UNAVAILABLE");
    expect(await readFile(victimKeyFile, "utf8")).toBe(before);
    // The path handed to the web proxy never leads to the victim's gateway socket.
    let target: ScreenGatewayTarget | undefined;
    let targetError: unknown;
    try {
      target = await attacker.screens?.target();
    } catch (error) {
      targetError = error;
    }
    if (target?.transport === "unix") {
      const reached = await stat(target.socketPath).catch(() => undefined);
      expect(reached?.ino).not.toBe((await stat(victimGateway)).ino);
    } else {
      expect(isSandboxError(targetError) && targetError.code).toBe("DESKTOP_UNAVAILABLE");
    }
    // The victim's own capability and desktop keep working.
    expect(await victim.screens?.check(victimTicket)).toEqual({ ok: true });
    const frame = await (victim.desktop as SupervisedDesktop).observe("bot_victim");
    expect(frame.png.length).toBeGreaterThan(0);
  });

  it("stored-file reads and checkpoints of the attacker's home never include the victim's files", async () => {
    const store = new LocalAgentHomeStore({ dataDir });
    const ref = { homeKey: attackerId, revision: 0 };
    const read = await store.readFile({ ...ref, path: "stolen.txt", maxBytes: 1024 }).then(
      (file) => file.toString("utf8"),
      (error: unknown) => `refused ${(error as { code?: string }).code}`,
    );
    expect(read).not.toContain("victim-secret");
    const listed = await store.listFiles({ ...ref, path: "stolen-dir" }).catch(() => []);
    expect(listed.map((entry) => entry.name)).not.toContain("notes.txt");
    const checkpoint = await store.checkpoint({
      homeKey: attackerId,
      previousRevision: 0,
      source: { kind: "local-dir" },
      force: true,
      commit: async () => true,
    });
    // What a replacement of the attacker's computer would be restored from (PRV-3).
    const archive = await store.openArchive({ homeKey: attackerId, revision: checkpoint.revision });
    const packed = (await readAll(archive)).toString("latin1");
    expect(packed).not.toContain("victim-secret");
    expect(packed).not.toContain("notes.txt");
    // Nothing appeared in (or left) the victim's home during any of the attempts.
    expect(await victimFiles()).toBe(victimFilesBefore);
    expect(await victimBots()).toEqual(["bot_victim"]);
  });
});
