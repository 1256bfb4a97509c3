import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { COMPOSE_SECRETS, ensureComposeSecrets } from "./compose-secrets.ts";

describe("compose secrets init", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "rakazo-secrets-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("generates every secret once, mode 0600, and keeps them on the next run", async () => {
    expect(await ensureComposeSecrets(dir)).toEqual(Object.keys(COMPOSE_SECRETS));
    const first = await Promise.all(Object.keys(COMPOSE_SECRETS).map((n) => readFile(join(dir, n), "utf8")));
    for (const name of Object.keys(COMPOSE_SECRETS)) {
      expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
    }
    expect(Buffer.from(first[3] ?? "", "base64")).toHaveLength(32);
    expect(first[0]).toMatch(/^[0-9a-f]{48}$/);

    expect(await ensureComposeSecrets(dir)).toEqual([]);
    const second = await Promise.all(Object.keys(COMPOSE_SECRETS).map((n) => readFile(join(dir, n), "utf8")));
    expect(second).toEqual(first);
  });

  it("never replaces a secret that exists (an operator's own key stays)", async () => {
    await mkdir(join(dir, "core"), { recursive: true });
    await writeFile(join(dir, "core/master-key"), "operator-key", { mode: 0o600 });
    const created = await ensureComposeSecrets(dir);
    expect(created).not.toContain("core/master-key");
    expect(await readFile(join(dir, "core/master-key"), "utf8")).toBe("operator-key");
  });
});
