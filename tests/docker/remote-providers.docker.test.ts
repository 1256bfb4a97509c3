// The E2B and Novita adapters through their REAL SDKs (`@e2b/desktop`/`e2b`,
// `novita-sandbox`) against the loopback emulators (packages/emulators), whose sandboxes are
// real `--network none` containers of the computer image. The shared conformance suite (CMP-8,
// PRV-1) runs in full, desktops included, then the SDK translation cases of the issue:
// exit codes, long commands, a killed machine replaced and restored byte for byte (files,
// modes, a browser cookie; PRV-3, PER-2), a cached handle still working after a resume, and
// provider error bodies as stable codes.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { type E2BEmulator, type Flavor, startE2BEmulator } from "@rakazo/emulators/e2b";
import { isSandboxError, type SandboxProvider } from "@rakazo/sandbox";
import { createE2BProvider, createNovitaProvider } from "@rakazo/sandbox/e2b-family";
import { readAll, runSandboxProviderContract } from "@rakazo/sandbox/testing";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserCookieFixture } from "../support/browser-cookie.ts";
import { COMPUTER_IMAGE } from "../support/docker.ts";
import { requireDocker } from "../support/tools.ts";

// Skips only locally without an engine or image; fails under CI=true (tests/support/tools.ts).
const gate = await requireDocker("remote adapters against their emulators");

const API_KEY = `emu_${randomBytes(12).toString("hex")}`;
const LABELS = { "rakazo-test.branch": "i14", "rakazo-test.suite": "remote-providers" };
let bundle: Promise<Uint8Array> | undefined;
const supervisorBundle = () => {
  bundle ??= bundleSupervisor().then((b) => new Uint8Array(Buffer.from(b.text)));
  return bundle;
};

function adapter(flavor: Flavor, emulator: E2BEmulator, extra: { ttlMs?: number } = {}): SandboxProvider {
  const config = {
    apiKey: API_KEY,
    apiUrl: emulator.url,
    sandboxUrl: emulator.url,
    domain: emulator.domain,
    portUrlTemplate: emulator.portUrlTemplate,
    supervisorBundle,
    ...extra,
  };
  return flavor === "e2b" ? createE2BProvider(config) : createNovitaProvider(config);
}

for (const flavor of ["e2b", "novita"] as const) {
  describe.skipIf(gate.skip)(`${gate.title}: ${flavor}`, () => {
    let emulator: E2BEmulator;
    const made: SandboxProvider[] = [];

    beforeAll(async () => {
      emulator = await startE2BEmulator({ flavor, image: COMPUTER_IMAGE, apiKey: API_KEY, labels: LABELS });
    });
    afterAll(async () => {
      await emulator?.close();
    }, 120_000);

    runSandboxProviderContract({
      name: `${flavor} (real SDK against the emulator)`,
      create: async () => adapter(flavor, emulator),
      timeoutMs: 240_000,
    });

    describe(`${flavor} SDK translation`, () => {
      const fresh = async () => {
        const provider = adapter(flavor, emulator);
        made.push(provider);
        const computerId = `cmp_t${randomBytes(6).toString("hex")}`;
        const { ref } = await provider.provision({ computerId, mode: "team", homeKey: computerId });
        return { provider, ref, computerId, sandbox: provider.sandbox(ref) };
      };

      it("a command exiting 3 is a result with exit code 3, not an exception", async () => {
        const { provider, ref, sandbox } = await fresh();
        const result = await sandbox.exec({ argv: ["sh", "-c", "echo out; echo err >&2; exit 3"] });
        expect(result).toEqual({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false });
        await provider.destroy(ref);
      });

      it("a command longer than the SDK's 60 s default deadline is not cut", async () => {
        const { provider, ref, sandbox } = await fresh();
        // 15 minutes would be the same path: the adapter passes its own deadline, never the SDK's.
        // Both at once (one wait, not two): each is its own process stream on the machine.
        const [result, untimed] = await Promise.all([
          sandbox.exec({ argv: ["sh", "-c", "sleep 65; echo finished"], timeoutMs: 15 * 60_000 }),
          sandbox.exec({ argv: ["sh", "-c", "sleep 62; echo untimed"] }),
        ]);
        expect(result).toMatchObject({ exitCode: 0, stdout: "finished\n", timedOut: false });
        expect(untimed).toMatchObject({ exitCode: 0, stdout: "untimed\n" });
        await provider.destroy(ref);
      }, 240_000);

      it("a killed sandbox is missing; provision replaces it and the checkpoint restores files, modes and a browser cookie", async () => {
        const { provider, ref, computerId, sandbox } = await fresh();
        const bot = "bot_restore";
        const blob = randomBytes(50_000);
        await sandbox.files.write("data/blob.bin", blob);
        await sandbox.files.write("bin/tool.sh", "#!/bin/sh\necho tool\n");
        expect((await sandbox.exec({ argv: ["chmod", "0750", "bin/tool.sh"] })).exitCode).toBe(0);
        const cookie = browserCookieFixture();
        await cookie.plant(sandbox, bot);
        // PER-7: the browser is closed (profile flushed) before the export.
        await sandbox.desktop?.release(bot);
        const checkpoint = await readAll(await sandbox.files.exportWorkspace());

        await emulator.killSandbox(ref);
        expect(await provider.status(ref)).toBe("missing");
        const err = await sandbox.exec({ argv: ["true"] }).catch((e: unknown) => e);
        expect(isSandboxError(err) ? err.code : err).toBe("SANDBOX_GONE");

        const next = await provider.provision({ computerId, mode: "team", homeKey: computerId, ref });
        expect(next.replaced).toBe(true);
        expect(next.ref).not.toBe(ref);
        const replacement = provider.sandbox(next.ref);
        await replacement.files.importWorkspace(Readable.from(checkpoint));
        expect(Buffer.from(await replacement.files.read("data/blob.bin")).equals(blob)).toBe(true);
        const mode = await replacement.exec({ argv: ["stat", "-c", "%a", "bin/tool.sh"] });
        expect(mode.stdout.trim()).toBe("750");
        expect((await replacement.exec({ argv: ["./bin/tool.sh"] })).stdout).toBe("tool\n");
        // The restored browser profile still holds the cookie the page set before the kill.
        const restored = adapter(flavor, emulator);
        expect(await cookie.read(restored.sandbox(next.ref), bot)).toBe(cookie.cookie);
        await provider.destroy(next.ref);
      }, 400_000);

      it("warm supervisor calls go over the hosted gateway port, not a process start; a restarted daemon is found again (CMP-8)", async () => {
        const { provider, ref, sandbox } = await fresh();
        const bot = "bot_channel";
        expect((await sandbox.desktop?.observe(bot))?.width).toBeGreaterThan(0);
        // The command path needs the bundle file; the running daemon no longer does. With the
        // file unreadable, only the channel can answer.
        const lock = (mode: string) =>
          sandbox.exec({ argv: ["sh", "-c", `chmod ${mode} "$HOME"/.rakazo/supervisor-*.mjs`] });
        expect((await lock("000")).exitCode).toBe(0);
        const warm = await sandbox.desktop?.observe(bot);
        expect(
          Buffer.from(warm?.png ?? [])
            .subarray(1, 4)
            .toString(),
        ).toBe("PNG");
        // Another process (API beside a worker) opens its own channel with the key from the file.
        expect((await adapter(flavor, emulator).sandbox(ref).desktop?.list())?.map((d) => d.botId)).toEqual([
          bot,
        ]);
        const key = await sandbox.exec({ argv: ["sh", "-c", 'stat -c %a "$HOME"/.rakazo/run/rpc.key'] });
        expect(key.stdout.trim()).toBe("600");

        // The daemon dies (its desktops with it): the next call is refused on the port and goes
        // by the command path, which starts a new daemon with a new key.
        expect((await lock("644")).exitCode).toBe(0);
        await sandbox.exec({ argv: ["sh", "-c", "pkill -f 'supervisor-.*serve' ; sleep 1"] });
        expect(
          Buffer.from((await sandbox.desktop?.observe(bot))?.png ?? [])
            .subarray(1, 4)
            .toString(),
        ).toBe("PNG");
        await provider.destroy(ref);
      }, 240_000);

      it("provisioning a machine whose supervisor bundle differs installs this one again", async () => {
        const { provider, ref, computerId, sandbox } = await fresh();
        const digest = `sha256sum "$HOME"/.rakazo/supervisor-*.mjs | cut -c1-64`;
        const before = (await sandbox.exec({ argv: ["sh", "-c", digest] })).stdout;
        expect(before).toMatch(/^[0-9a-f]{64}\n$/);
        const tamper = 'for f in "$HOME"/.rakazo/supervisor-*.mjs; do echo tampered > "$f"; done';
        expect((await sandbox.exec({ argv: ["sh", "-c", tamper] })).exitCode).toBe(0);
        expect((await sandbox.exec({ argv: ["sh", "-c", digest] })).stdout).not.toBe(before);
        expect(await provider.provision({ computerId, mode: "team", homeKey: computerId, ref })).toEqual({
          ref,
          replaced: false,
        });
        expect((await sandbox.exec({ argv: ["sh", "-c", digest] })).stdout).toBe(before);
        await provider.destroy(ref);
      });

      it("a sandbox paused and resumed by another process: the cached handle keeps working", async () => {
        const { provider, ref, computerId, sandbox } = await fresh();
        expect((await sandbox.exec({ argv: ["echo", "before"] })).stdout).toBe("before\n");
        // Another process (API vs worker) pauses and resumes the machine; the envd token is the
        // sandbox's for its life, so this process's SDK object (token from create) still works.
        const other = adapter(flavor, emulator);
        await other.stop(ref);
        expect(await provider.status(ref)).toBe("stopped");
        // (Asked through the other process: this one's cached handle must stay as it was.)
        const paused = await other
          .sandbox(ref)
          .exec({ argv: ["true"] })
          .catch((e: unknown) => e);
        expect(isSandboxError(paused) ? paused.code : paused).toBe("SANDBOX_NOT_RUNNING");
        expect(await other.provision({ computerId, mode: "team", homeKey: computerId, ref })).toEqual({
          ref,
          replaced: false,
        });
        expect((await sandbox.exec({ argv: ["echo", "after"] })).stdout).toBe("after\n");
        await provider.destroy(ref);
      });

      it("a provider error body reaches the caller as a stable code, without the key", async () => {
        const full = await startE2BEmulator({
          flavor,
          image: COMPUTER_IMAGE,
          apiKey: API_KEY,
          labels: LABELS,
          maxSandboxes: 0,
        });
        try {
          const provider = adapter(flavor, full);
          const error = await provider
            .provision({ computerId: "cmp_full", mode: "team", homeKey: "cmp_full" })
            .catch((e: unknown) => e);
          expect(isSandboxError(error) ? error.code : error).toBe("SANDBOX_PROVIDER_ERROR");
          expect((error as Error).message).toContain("maximum number of concurrent sandboxes");
          expect((error as Error).message).not.toContain(API_KEY);
          const wrongKey =
            flavor === "e2b"
              ? createE2BProvider({
                  apiKey: "wrong",
                  apiUrl: full.url,
                  sandboxUrl: full.url,
                  supervisorBundle,
                })
              : createNovitaProvider({
                  apiKey: "wrong",
                  apiUrl: full.url,
                  sandboxUrl: full.url,
                  supervisorBundle,
                });
          const refused = await wrongKey.status("ixxxx").catch((e: unknown) => e);
          expect(isSandboxError(refused) ? refused.code : refused).toBe("SANDBOX_PROVIDER_ERROR");
          expect(full.sandboxes()).toEqual([]);
        } finally {
          await full.close();
        }
      });
    });
  });
}
