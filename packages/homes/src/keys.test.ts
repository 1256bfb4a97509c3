import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isHomeStoreError } from "./errors.ts";
import { LocalKeyWrapper, loadOrCreateMasterKey, newDataKey, unwrapWithKey, wrapWithKey } from "./keys.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("key wrapping", () => {
  it("round-trips data key → content key → master key", async () => {
    const master = new LocalKeyWrapper(randomBytes(32));
    const content = newDataKey();
    const data = newDataKey();
    const wrappedContent = await master.wrap(content, "space:spc_1");
    const wrappedData = wrapWithKey(content, data, "home:home_1");
    const content2 = await master.unwrap(wrappedContent, "space:spc_1");
    expect(unwrapWithKey(content2, wrappedData, "home:home_1")).toEqual(data);
  });

  it("fails clearly with the wrong master key, another context, or an altered value", async () => {
    const wrapped = await new LocalKeyWrapper(randomBytes(32)).wrap(newDataKey(), "space:spc_1");
    const other = new LocalKeyWrapper(randomBytes(32));
    const error = await other.unwrap(wrapped, "space:spc_1").catch((e: unknown) => e);
    expect(isHomeStoreError(error, "KEY_UNWRAP_FAILED")).toBe(true);
    expect((error as Error).message).toMatch(/wrong master key/);
    const content = newDataKey();
    const data = wrapWithKey(content, newDataKey(), "home:home_1");
    expect(() => unwrapWithKey(content, data, "home:home_2")).toThrow(/does not open/);
    const altered = `${data.slice(0, -2)}${data.endsWith("A") ? "B" : "A"}A`;
    expect(() => unwrapWithKey(content, altered, "home:home_1")).toThrow(/does not open/);
    expect(() => new LocalKeyWrapper(randomBytes(16))).toThrow(/32 bytes/);
  });

  it("creates DATA_DIR/master.key once, mode 0600, and every caller agrees on it", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "rakazo-master-"));
    dirs.push(dataDir);
    const keys = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateMasterKey({ dataDir })));
    for (const key of keys) expect(key).toEqual(keys[0]);
    const info = await stat(join(dataDir, "master.key"));
    expect(info.mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(join(dataDir, "master.key"), "utf8")).trim(), "base64")).toEqual(
      keys[0],
    );
    const configured = randomBytes(32);
    expect(await loadOrCreateMasterKey({ dataDir, configured: configured.toString("base64") })).toEqual(
      configured,
    );
    await expect(loadOrCreateMasterKey({ dataDir, configured: "c2hvcnQ=" })).rejects.toThrow(/32 bytes/);
  });
});
