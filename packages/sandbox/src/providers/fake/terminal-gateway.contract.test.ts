/**
 * The gateway contract (@rakazo/protocol/testing) on the fake computer's terminal gateway: a
 * terminal ticket on `/v1/pty`, reached on loopback; it reads its machine folder on every check.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TERMINAL_GATEWAY_PATH } from "@rakazo/protocol/terminal";
import { runGatewayContract } from "@rakazo/protocol/testing";
import { gatewayKeysFor, generateScreenKeys, parseScreenKeys } from "@rakazo/screens";
import { createFakeProvider } from "./fake-provider.ts";

const keyring = parseScreenKeys(generateScreenKeys("k1"));
const computerId = "cmp_fakegatewaycontract0";
const botId = "bot_fakegatewaycontract0";

runGatewayContract({
  name: "the fake provider's terminal gateway",
  async create() {
    const root = await mkdtemp(join(tmpdir(), "rakazo-fake-gw-contract-"));
    const provider = createFakeProvider({ rootDir: root });
    const { ref } = await provider.provision({ computerId, mode: "team", homeKey: "home_gw" });
    const sandbox = provider.sandbox(ref);
    const config = gatewayKeysFor(keyring, computerId);
    await sandbox.screens?.configure(config);
    const observed = await sandbox.desktop?.observe(botId);
    const slot = observed?.slot ?? { index: -1, generation: -1 };
    await sandbox.connectTerminal?.({ botId, slot, cwd: "." });
    const target = await sandbox.screens?.target();
    if (target?.transport !== "http") throw new Error("the fake gateway listens on loopback TCP");
    const url = new URL(target.url);
    const [own] = config.keys;
    return {
      endpoint: { host: url.hostname, port: Number(url.port) },
      stateDir: join(root, ref),
      key: { kid: own?.kid ?? "", key: Buffer.from(own?.key ?? "", "base64") },
      computerId,
      botId,
      slot,
      session: { path: TERMINAL_GATEWAY_PATH, policy: "terminal" },
      async revoke(rules) {
        await sandbox.screens?.revoke(rules);
      },
      async closeSlot() {
        await sandbox.desktop?.release(botId);
      },
      async stopTerminal() {
        await sandbox.stopTerminal?.({ botId });
      },
      // Every check reads the machine folder again.
      async reload() {},
      async close() {
        await provider.destroy(ref);
        await rm(root, { recursive: true, force: true });
      },
    };
  },
});
