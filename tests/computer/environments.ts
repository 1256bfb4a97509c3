/**
 * Where VER-3's scenario runs. Both build the same system — the API and a worker hosting agent
 * runs (tests/support/system.ts) on the E2B adapter (`@e2b/desktop` + `e2b`, the supervisor
 * installed into every machine, CMP-8) — and differ only in what is behind it:
 * - `offlineTwin`: the E2B emulator (packages/emulators; sandboxes are `--network none`
 *   containers of the computer image) and a scripted Pi model. Runs in CI.
 * - `realE2B`: the E2B service with `E2B_API_KEY` and an OpenRouter model
 *   (`COMPUTER_E2E_MODEL`, `OPENROUTER_API_KEY`). Opt-in, `pnpm test:computer`.
 */
import { randomBytes } from "node:crypto";
import { registerFauxProvider } from "@mariozechner/pi-ai";
import { startE2BEmulator } from "@rakazo/emulators/e2b";
import { createE2BProvider, type E2BProviderConfig } from "@rakazo/sandbox/e2b-family";
import { COMPUTER_IMAGE } from "@rakazo/sandbox/testing";
import { bundleSupervisor } from "@rakazo/supervisor/bundle";
import { createTestSystem } from "../support/system.ts";
import type { ScenarioEnvironment } from "./scenario.ts";

export interface RunningEnvironment extends ScenarioEnvironment {
  close(): Promise<void>;
}

let bundle: Promise<Uint8Array> | undefined;
/** The supervisor as the image build bundles it; the adapter installs these bytes (CMP-8). */
const supervisorBundle = () => {
  bundle ??= bundleSupervisor().then((b) => new Uint8Array(Buffer.from(b.text)));
  return bundle;
};

/** The E2B emulator and a scripted model: every step of VER-3 but the cloud and the model. */
export async function offlineTwin(options: { labels: Record<string, string> }): Promise<RunningEnvironment> {
  const apiKey = `emu_${randomBytes(12).toString("hex")}`;
  const emulator = await startE2BEmulator({
    flavor: "e2b",
    image: COMPUTER_IMAGE,
    apiKey,
    labels: options.labels,
  });
  const faux = registerFauxProvider({ models: [{ id: "ver3-scripted", input: ["text", "image"] }] });
  const config: E2BProviderConfig = {
    apiKey,
    apiUrl: emulator.url,
    sandboxUrl: emulator.url,
    domain: emulator.domain,
    portUrlTemplate: emulator.portUrlTemplate,
    supervisorBundle,
  };
  try {
    const system = await createTestSystem({
      provider: async () => createE2BProvider(config),
      agentModel: "faux:ver3-scripted",
    });
    await system.startWorker({
      agent: { model: "faux:ver3-scripted", resolvedModel: faux.getModel(), apiKeys: {} },
    });
    return {
      name: "offline twin: the E2B emulator and a scripted Pi model",
      system,
      scripted: faux,
      patience: 1,
      // Behind the adapter's back, as when the service deletes or expires a sandbox.
      destroyMachine: (ref) => emulator.killSandbox(ref),
      async close() {
        await system.close();
        faux.unregister();
        await emulator.close();
      },
    };
  } catch (error) {
    faux.unregister();
    await emulator.close();
    throw error;
  }
}

/** The real E2B service and a real vision model through OpenRouter. */
export async function realE2B(keys: {
  e2bApiKey: string;
  openRouterApiKey: string;
  model: string;
  /** `E2B_TEMPLATE`: a desktop template with Node, Xvfb, Chromium and x11vnc (default `desktop`). */
  template?: string;
}): Promise<RunningEnvironment> {
  const config: E2BProviderConfig = {
    apiKey: keys.e2bApiKey,
    supervisorBundle,
    ...(keys.template ? { template: keys.template } : {}),
  };
  const agentModel = `openrouter:${keys.model}`;
  const system = await createTestSystem({ provider: async () => createE2BProvider(config), agentModel });
  await system.startWorker({
    agent: { model: agentModel, vision: true, apiKeys: { openrouter: keys.openRouterApiKey } },
  });
  return {
    name: `E2B with ${keys.model} through OpenRouter`,
    system,
    patience: 4,
    // Another adapter instance kills it: the system's provider learns of it only by asking.
    destroyMachine: (ref) => createE2BProvider(config).destroy(ref),
    close: () => system.close(),
  };
}
