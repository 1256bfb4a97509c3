// A computer's gateway is handed its derived keys once per machine, not on every
// computer/screenUrl (packages/services/src/screens/gateway-keys.ts): a mint on a gateway this
// process configured makes no configure call; a replaced machine is configured on its next
// mint; a gateway that lost its keys, or holds other ones, is reconfigured once by the
// authority and the screen opens; a process with a rotated keyring configures on its first
// mint and the gateway stops trusting the dropped key. Counted on the fake provider's real
// gateway state (its keys file), through the real API and worker.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { computers } from "@rakazo/db";
import { deriveScreenKey, newCapabilityId, sealCapability } from "@rakazo/protocol/capability";
import { gatewayStateFiles } from "@rakazo/protocol/gateway-core";
import { createFakeProvider, type SandboxProvider } from "@rakazo/sandbox";
import { authorizeScreen, type ServiceContext, screenUrl } from "@rakazo/services";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countingConfigures } from "../support/counting-configures.ts";
import { createTestSystem, eventually, runningComputer, type TestSystem } from "../support/system.ts";

/** Every `screens.configure` the API and worker made, by machine ref. */
const configures: string[] = [];
const configuresOf = (ref: string) => configures.filter((r) => r === ref).length;

/** The fake provider, counting configure calls into its machines' gateways. */
function countingProvider(rootDir: string): SandboxProvider {
  return countingConfigures(createFakeProvider({ rootDir }), configures);
}

let system: TestSystem;
let ada: Awaited<ReturnType<TestSystem["newTenant"]>>;
let computerId: string;

beforeAll(async () => {
  system = await createTestSystem({ screens: true, provider: async (dir) => countingProvider(dir) });
  await system.startWorker();
  ada = await system.newTenant("ada");
  computerId = await runningComputer(system, ada);
}, 60_000);
afterAll(() => system?.close());

const refOf = async () => {
  const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
  if (!row?.providerRef) throw new Error(`computer ${computerId} has no machine`);
  return row.providerRef;
};
const capabilityOf = (url: string) => new URL(url).pathname.split("/")[2] as string;
const mint = async () => {
  const res = await system.rpc(
    "computer/screenUrl",
    { computerId, botId: ada.botId, policy: "view" },
    ada.token,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result as { url: string; slot: { index: number; generation: number } };
};
/** A gateway ticket for the bot's current slot, sealed with one master's derived key. */
const ticketUnder = (kid: string, master: Buffer, slot: { index: number; generation: number }) =>
  sealCapability(deriveScreenKey(master, "gateway", computerId), kid, "gateway", {
    id: newCapabilityId(),
    computerId,
    botId: ada.botId,
    slot: slot.index,
    generation: slot.generation,
    policy: "view",
    subject: ada.userId,
    issuedAt: Date.now(),
    expiresAt: Date.now() + 60_000,
  });
const gatewayOf = async () => {
  const screens = system.provider.sandbox(await refOf()).screens;
  if (!screens) throw new Error("the fake computer has no gateway");
  return screens;
};

describe("the gateway's keys, once per machine", () => {
  it("a mint on a gateway this process configured makes no configure call, and its screen opens", async () => {
    const ref = await refOf();
    const before = configuresOf(ref);
    const first = await mint();
    await authorizeScreen(system.ctx, { capability: capabilityOf(first.url) });
    // At most the first mint of this machine configures (the worker may have before it).
    const afterFirst = configuresOf(ref);
    expect(afterFirst - before).toBeLessThanOrEqual(1);
    for (let i = 0; i < 3; i++) {
      const again = await mint();
      const opened = await authorizeScreen(system.ctx, { capability: capabilityOf(again.url) });
      expect(opened.policy).toBe("view");
    }
    expect(configuresOf(ref)).toBe(afterFirst);
  });

  it("a gateway that lost its keys (a fresh run directory) is configured once by the authority", async () => {
    const ref = await refOf();
    await mint();
    rmSync(gatewayStateFiles(join(system.dataDir, ref)).keys);
    const before = configuresOf(ref);
    const { url } = await mint();
    expect(configuresOf(ref)).toBe(before);
    await expect(authorizeScreen(system.ctx, { capability: capabilityOf(url) })).resolves.toMatchObject({
      policy: "view",
    });
    expect(configuresOf(ref)).toBe(before + 1);
    expect(
      system.logLines.some(
        (l) => l.includes('"screen.gateway.reconfigured"') && l.includes("not_configured"),
      ),
    ).toBe(true);
    // Configured again: the next open needs no configure.
    await authorizeScreen(system.ctx, { capability: capabilityOf((await mint()).url) });
    expect(configuresOf(ref)).toBe(before + 1);
  });

  it("a gateway holding other keys for the same key id is reconfigured to exactly ours", async () => {
    const { slot } = await mint();
    const stranger = randomBytes(32);
    // As a replica holding another keyring would leave it.
    await (await gatewayOf()).configure({
      computerId,
      keys: [{ kid: "k1", key: deriveScreenKey(stranger, "gateway", computerId).toString("base64") }],
    });
    expect(await (await gatewayOf()).check(ticketUnder("k1", stranger, slot))).toEqual({ ok: true });
    const { url } = await mint();
    await expect(authorizeScreen(system.ctx, { capability: capabilityOf(url) })).resolves.toMatchObject({
      policy: "view",
    });
    expect(await (await gatewayOf()).check(ticketUnder("k1", stranger, slot))).toEqual({
      ok: false,
      reason: "forged",
    });
  });

  it("a replaced machine (computer/update) is configured on its next mint", async () => {
    const before = await refOf();
    const update = await system.rpc("computer/update", { computerId }, ada.token);
    expect(update.status, JSON.stringify(update.json)).toBe(200);
    const after = await eventually(async () => {
      const [row] = await system.ctx.db.select().from(computers).where(eq(computers.id, computerId));
      return row?.state === "running" && row.providerRef && row.providerRef !== before
        ? row.providerRef
        : undefined;
    }, 30_000);
    const configuredBefore = configuresOf(after);
    const { url } = await mint();
    expect(configuresOf(after)).toBe(configuredBefore + 1);
    await expect(authorizeScreen(system.ctx, { capability: capabilityOf(url) })).resolves.toMatchObject({
      policy: "view",
    });
    // The authority had nothing to repair.
    expect(configuresOf(after)).toBe(configuredBefore + 1);
  }, 60_000);

  it("a process with a rotated keyring configures on its first mint; the dropped key stops opening", async () => {
    const screens = system.ctx.screens;
    const oldMaster = screens?.keyring.masters.get("k1");
    if (!screens || !oldMaster) throw new Error("the test system mints with k1");
    const newMaster = randomBytes(32);
    // The next process: k2 seals and is the only key (k1 dropped after its longest lifetime).
    const rotated: ServiceContext = {
      ...system.ctx,
      screens: { ...screens, keyring: { activeKid: "k2", masters: new Map([["k2", newMaster]]) } },
    };
    const caller = { userId: ada.userId, tokenId: ada.tokenId };
    const { slot } = await mint();
    expect(await (await gatewayOf()).check(ticketUnder("k1", oldMaster, slot))).toEqual({ ok: true });
    const ref = await refOf();
    const before = configuresOf(ref);
    const minted = await screenUrl(rotated, caller, { computerId, botId: ada.botId, policy: "view" });
    expect(configuresOf(ref)).toBe(before + 1);
    await expect(authorizeScreen(rotated, { capability: capabilityOf(minted.url) })).resolves.toMatchObject({
      policy: "view",
    });
    expect(await (await gatewayOf()).check(ticketUnder("k2", newMaster, minted.slot))).toEqual({ ok: true });
    expect(await (await gatewayOf()).check(ticketUnder("k1", oldMaster, minted.slot))).toEqual({
      ok: false,
      reason: "unknown_key",
    });
  });
});
