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

  it("finds a secret of each shape on its own, wherever it sits in the text", () => {
    // One sample per pattern, alone and inside other text: the one-scan filter that lets most
    // strings through untouched must never let one of these through.
    const samples: [string, string][] = [
      ["cookie: session=abc", "session=abc"],
      ["rkz_ABCDEFGHIJKL", "ABCDEFGHIJKL"],
      ["rs1.k1.ABCDEFGHIJKLMNOPQRST", "ABCDEFGHIJKLMNOPQRST"],
      ["ghp_ABCDEFGHIJKLMN", "ABCDEFGHIJKLMN"],
      ["sk-proj-ABCDEFGHIJKLMNOPQR", "ABCDEFGHIJKLMNOPQR"],
      ["xoxb-12345678-abc", "12345678-abc"],
      ["AKIAABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"],
      ["e2b_ABCDEFGHIJKLMNOPQR", "ABCDEFGHIJKLMNOPQR"],
      ["eyJhbGciOiJ.eyJzdWIiOiJ.c2lnbmF0dXJl", "eyJzdWIiOiJ"],
      ["DB_PASSWORD=hunter2", "hunter2"],
      ["--token hunter3", "hunter3"],
      ["curl -u alice:hunter4", "hunter4"],
      ["Bearer abcdefgh", "abcdefgh"],
      ["https://alice:hunter5@example.test/", "hunter5"],
      ["https://example.test/x?sig=hunter6", "hunter6"],
    ];
    for (const [sample, secret] of samples) {
      expect(redactText(sample)).not.toContain(secret);
      expect(redactText(`GET /x ${sample} done`)).not.toContain(secret);
    }
    // Text with nothing secret in it comes back as it was.
    for (const plain of [
      "http.request",
      "POST",
      "/rpc/computer/get",
      "0b8c1f7e-8d0e-4a5e-9e0a-3c8a1c9d2e11",
    ]) {
      expect(redactText(plain)).toBe(plain);
    }
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
