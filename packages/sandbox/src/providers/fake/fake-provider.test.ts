import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONTRACT_TESTS, runSandboxProviderContract } from "../../testing/contract.ts";
import { createFakeProvider } from "./fake-provider.ts";

const roots: string[] = [];
async function freshRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "rakazo-fake-"));
  roots.push(root);
  return root;
}
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

// PRV-6: the fake passes the same conformance suite as every real adapter.
runSandboxProviderContract({
  name: "fake",
  create: async () => createFakeProvider({ rootDir: await freshRoot() }),
  skip: [
    {
      test: "desktops: two bots at once keep their own cookies; a released bot's profile keeps them (CMP-2)",
      reason: "the fake's desktop draws text, it has no browser and its exec runs no node",
    },
    {
      test: "screens: view and control tokens of a recycled slot are refused (SCR-2)",
      reason: "the fake has no screen gateway",
    },
    ...CONTRACT_TESTS.terminal.map((test) => ({
      test,
      reason: "the fake's shell is emulated (no uid, no processes); terminal-gateway.test.ts covers it",
    })),
    ...CONTRACT_TESTS.processes.map((test) => ({ test, reason: "the fake runs no background commands" })),
  ],
});

describe("fake provider specifics", () => {
  it("shares machines between provider instances over the same root (API and worker processes)", async () => {
    const rootDir = await freshRoot();
    const worker = createFakeProvider({ rootDir });
    const api = createFakeProvider({ rootDir });
    const { ref } = await worker.provision({ computerId: "cmp_x", mode: "team", homeKey: "cmp_x" });
    await worker.sandbox(ref).files.write("hello.txt", "from worker");
    const result = await api.sandbox(ref).exec({ argv: ["cat", "hello.txt"] });
    expect(result.stdout).toBe("from worker");
  });

  it("refuses a desktop past its screen limit with MULTI_SCREEN_UNAVAILABLE, shell keeps working (CMP-5)", async () => {
    const provider = createFakeProvider({ rootDir: await freshRoot(), screenLimit: 1 });
    const { ref } = await provider.provision({ computerId: "cmp_y", mode: "team", homeKey: "cmp_y" });
    const sandbox = provider.sandbox(ref);
    await sandbox.desktop?.observe("bot_a");
    await expect(sandbox.desktop?.observe("bot_b")).rejects.toMatchObject({
      code: "MULTI_SCREEN_UNAVAILABLE",
    });
    expect((await sandbox.exec({ argv: ["echo", "ok"] })).stdout).toBe("ok\n");
  });

  it("does not reconnect a ref that belongs to another computer", async () => {
    const provider = createFakeProvider({ rootDir: await freshRoot() });
    const first = await provider.provision({ computerId: "cmp_one", mode: "team", homeKey: "cmp_one" });
    const other = await provider.provision({
      computerId: "cmp_two",
      mode: "team",
      homeKey: "cmp_two",
      ref: first.ref,
    });
    expect(other.replaced).toBe(true);
    expect(other.ref).not.toBe(first.ref);
  });
});
