/**
 * The gateway contract (@rakazo/protocol/testing) on the supervisor's screen gateway: a control
 * ticket bridged on `/v1/rfb` to a fake RFB server; the gateway reads its state dir on start.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { deriveScreenKey } from "@rakazo/protocol/capability";
import { runGatewayContract } from "@rakazo/protocol/testing";
import { startFakeRfb } from "../testing/fake-rfb.ts";
import { ComputerGateway, type GatewaySlot } from "./computer-gateway.ts";

const computerId = "cmp_gatewaycontract000";
const botId = "bot_a";

runGatewayContract({
  name: "the supervisor's screen gateway",
  async create() {
    const dir = mkdtempSync(path.join(os.tmpdir(), "rakazo-gw-contract-"));
    const rfb = await startFakeRfb(path.join(dir, "slot0-g1.sock"));
    const slots = new Map<number, GatewaySlot>([
      [0, { index: 0, generation: 1, botId, state: "running", vncSocket: rfb.path }],
    ]);
    const listen = { path: path.join(dir, "gateway.sock") };
    const start = async (): Promise<ComputerGateway> => {
      const started = new ComputerGateway({ listen, stateDir: dir, slotAt: (index) => slots.get(index) });
      await started.start();
      started.terminal.start(botId, { cwd: dir });
      return started;
    };
    const key = deriveScreenKey(randomBytes(32), "gateway", computerId);
    let gateway = await start();
    gateway.configure({ computerId, keys: [{ kid: "k1", key: key.toString("base64") }] });
    return {
      endpoint: { socketPath: listen.path },
      stateDir: dir,
      key: { kid: "k1", key },
      computerId,
      botId,
      slot: { index: 0, generation: 1 },
      session: { path: "/v1/rfb", policy: "control" },
      async revoke(rules) {
        gateway.revoke(rules);
      },
      async closeSlot() {
        gateway.closeSlot(0, 1);
        slots.delete(0);
      },
      async stopTerminal() {
        gateway.terminal.stop(botId);
      },
      async reload() {
        await gateway.close();
        gateway = await start();
      },
      async close() {
        await gateway.close();
        await rfb.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
