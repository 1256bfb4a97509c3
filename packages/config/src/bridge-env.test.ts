// The bridge's clients: BRIDGE_TOKEN (the client `default`), BRIDGE_TOKENS and BRIDGE_TOKENS_FILE,
// each client by the SHA-256 of its token; a mistake is a ConfigError saying where it is.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, parseBridgeEnv } from "./env.ts";

const sha = (token: string) => createHash("sha256").update(token).digest("hex");
const base = { RAKAZO_EXTERNAL_TOKEN: "e".repeat(40), RAKAZO_API_URL: "http://127.0.0.1:8787" };
const A = "a".repeat(40);
const B = "b".repeat(40);
/** The ConfigError message parsing `env` fails with. */
const refused = (env: Record<string, string>, files?: { readFile: (path: string) => string }) => {
  try {
    parseBridgeEnv({ ...base, ...env }, files);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("accepted");
};

describe("parseBridgeEnv: clients", () => {
  it("BRIDGE_TOKEN alone is the client default, hashed; its plain text is not in the result", () => {
    const env = parseBridgeEnv({ ...base, BRIDGE_TOKEN: A });
    expect(env.clients).toEqual([{ name: "default", tokenSha256: sha(A) }]);
    expect(JSON.stringify(env)).not.toContain(A);
    expect(env).toMatchObject({ BRIDGE_MCP_IDLE_SECONDS: 900, BRIDGE_MCP_MAX_SESSIONS_PER_CLIENT: 16 });
  });

  it("BRIDGE_TOKENS and a file of named clients, with comments and blank lines", () => {
    const file = `# harnesses\n\nalpha sha256:${sha(A)}   # the first\r\nbeta-2 SHA256:${sha(B).toUpperCase()}\n`;
    const env = parseBridgeEnv(
      { ...base, BRIDGE_TOKENS: ` gamma=sha256:${sha("g".repeat(40))} ,`, BRIDGE_TOKENS_FILE: "/etc/tokens" },
      { readFile: (path) => (path === "/etc/tokens" ? file : "") },
    );
    expect(env.clients).toEqual([
      { name: "gamma", tokenSha256: sha("g".repeat(40)) },
      { name: "alpha", tokenSha256: sha(A) },
      { name: "beta-2", tokenSha256: sha(B) },
    ]);
  });

  it("mistakes are refused, naming the entry", () => {
    expect(refused({})).toMatch(/no clients/);
    expect(refused({ BRIDGE_TOKEN: "short" })).toMatch(/BRIDGE_TOKEN must be at least 32/);
    // A token pasted in plain text, a bad name, a missing hash.
    expect(refused({ BRIDGE_TOKENS: `alpha=${A}` })).toMatch(/BRIDGE_TOKENS entry 1: expected sha256:/);
    expect(refused({ BRIDGE_TOKENS: `Alpha/x=sha256:${sha(A)}` })).toMatch(/entry 1: the client name/);
    expect(refused({ BRIDGE_TOKENS: `ok=sha256:${sha(A)},alone` })).toMatch(/entry 2/);
    expect(refused({ BRIDGE_TOKENS: `empty=sha256:${sha("")}` })).toMatch(/empty token/);
    // Names and tokens are unique across every source.
    expect(refused({ BRIDGE_TOKEN: A, BRIDGE_TOKENS: `default=sha256:${sha(B)}` })).toMatch(
      /client default is already defined by BRIDGE_TOKEN/,
    );
    expect(refused({ BRIDGE_TOKEN: A, BRIDGE_TOKENS: `other=sha256:${sha(A)}` })).toMatch(
      /also BRIDGE_TOKEN's/,
    );
    const file = { readFile: () => `one sha256:${sha(A)}\none sha256:${sha(B)} extra\n` };
    expect(refused({ BRIDGE_TOKENS_FILE: "/t" }, file)).toMatch(/BRIDGE_TOKENS_FILE \/t line 2/);
    expect(
      refused(
        { BRIDGE_TOKENS_FILE: "/missing" },
        {
          readFile: () => {
            throw new Error("ENOENT");
          },
        },
      ),
    ).toMatch(/cannot read \/missing: ENOENT/);
    expect(refused({ BRIDGE_TOKENS_FILE: "/t" })).toMatch(/no file reader/);
    expect(refused({ BRIDGE_TOKEN: A, BRIDGE_MCP_IDLE_SECONDS: "0" })).toMatch(/BRIDGE_MCP_IDLE_SECONDS/);
  });

  it("allowed origins are serialized origins; the key prefix ends in / and has no colon", () => {
    const env = parseBridgeEnv({
      ...base,
      BRIDGE_TOKEN: A,
      BRIDGE_ALLOWED_ORIGINS: " https://App.Example ,http://localhost:5173/,https://x.example:443",
      BRIDGE_KEY_PREFIX: "acme.prod/",
    });
    expect(env.BRIDGE_ALLOWED_ORIGINS).toEqual([
      "https://app.example",
      "http://localhost:5173",
      "https://x.example",
    ]);
    expect(env.BRIDGE_KEY_PREFIX).toBe("acme.prod/");
    expect(parseBridgeEnv({ ...base, BRIDGE_TOKEN: A })).toMatchObject({ BRIDGE_ALLOWED_ORIGINS: [] });
    for (const origin of ["https://app.example/path", "*", "ftp://x.example", "https://a.example?x"]) {
      expect(refused({ BRIDGE_TOKEN: A, BRIDGE_ALLOWED_ORIGINS: origin })).toMatch(/is not an origin/);
    }
    for (const prefix of ["acme", "team:x/", "a/b/", "/"]) {
      expect(refused({ BRIDGE_TOKEN: A, BRIDGE_KEY_PREFIX: prefix })).toMatch(/BRIDGE_KEY_PREFIX/);
    }
  });
});
