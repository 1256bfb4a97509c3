import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";
import { redactText, redactValue } from "./redact.ts";

describe("redaction", () => {
  it("removes Rakazo tokens, bearer credentials, URL passwords and secret query values", () => {
    const text = redactText(
      'curl -H "Authorization: Bearer abc123xyz" https://alice:hunter2@example.test/x?token=s3cr3t&ok=1 rkz_ABCDEFGHIJKLMNOP',
    );
    expect(text).not.toContain("abc123xyz");
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("s3cr3t");
    expect(text).not.toContain("ABCDEFGHIJKLMNOP");
    expect(text).toContain("ok=1");
  });

  it("blanks values under secret-looking keys at any depth", () => {
    const value = redactValue({
      headers: { Authorization: "x", cookie: "y" },
      nested: [{ apiKey: "z", name: "n" }],
    });
    expect(value).toEqual({
      headers: { Authorization: "[REDACTED]", cookie: "[REDACTED]" },
      nested: [{ apiKey: "[REDACTED]", name: "n" }],
    });
  });

  it("a provider's settings logged whole keep their API key out", () => {
    const value = redactValue({
      provider: { kind: "daytona", apiKey: "dtn-secret-1", apiUrl: "http://127.0.0.1:1/api" },
      env: { E2B_API_KEY: "e2b-secret-2", BOAT_API_URL: "http://127.0.0.1:2" },
      target: { headers: { "x-daytona-preview-token": "pvw-3" } },
    });
    expect(JSON.stringify(value)).not.toMatch(/secret-1|secret-2|pvw-3/);
    expect(value).toMatchObject({
      provider: { apiUrl: "http://127.0.0.1:1/api" },
      env: { BOAT_API_URL: "http://127.0.0.1:2" },
    });
  });

  it("the logger never writes a token it was handed", () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => lines.push(l) });
    log.info("token issued", { token: "rkz_abcdefghijklmnop", note: "uses rkz_abcdefghijklmnop" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("abcdefghijklmnop");
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: "info", msg: "token issued" });
  });
});
