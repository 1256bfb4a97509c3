// `.env` at the repository root is read when present; the environment wins.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadDotEnv } from "./dotenv.ts";

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe(".env", () => {
  it("fills in unset variables; variables already set win", async () => {
    const root = await mkdtemp(join(tmpdir(), "rakazo-dotenv-"));
    roots.push(root);
    await writeFile(join(root, ".env"), "API_PORT=9001\nWEB_PORT=9002\n# comment\nAGENT_MODEL=\n");
    const env: NodeJS.ProcessEnv = { WEB_PORT: "7000" };
    expect(loadDotEnv(env, pathToFileURL(`${root}/`))).toBe(join(root, ".env"));
    expect(env).toEqual({ API_PORT: "9001", WEB_PORT: "7000", AGENT_MODEL: "" });
  });

  it("no file, no change", async () => {
    const root = await mkdtemp(join(tmpdir(), "rakazo-dotenv-"));
    roots.push(root);
    const env: NodeJS.ProcessEnv = { A: "1" };
    expect(loadDotEnv(env, pathToFileURL(`${root}/`))).toBeUndefined();
    expect(env).toEqual({ A: "1" });
  });
});
