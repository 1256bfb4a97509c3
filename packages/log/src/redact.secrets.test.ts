// Command lines recorded as activity (TOOL-4) carry secrets in more shapes than log fields.
import { describe, expect, it } from "vitest";
import { redactText } from "./redact.ts";

describe("redaction of command lines", () => {
  it.each([
    ['curl -H "Authorization: Bearer abc123" http://x', "abc123"],
    ["curl -H 'Authorization: token zz9' http://x", "zz9"],
    ['curl -H "X-Api-Key: k-42-secret" http://x', "k-42-secret"],
    ["API_TOKEN=tok777 ./deploy", "tok777"],
    ['mysql --password "pw pw" db', "pw pw"],
    ["login --password=hunter2", "hunter2"],
    ["curl -u alice:hunter3 http://x", "hunter3"],
    ["git clone https://bob:pat999@github.example/x.git", "pat999"],
    ["echo ghp_abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"],
    ["export OPENROUTER_API_KEY=sk-or-v1-abcdefghijklmnopqrst", "abcdefghijklmnopqrst"],
    // Cloud sandbox providers: keys, preview and traffic tokens.
    ["E2B_API_KEY=anything-at-all node worker.ts", "anything-at-all"],
    ["BOAT_API_KEY='q w e' DAYTONA_API_KEY=d1 ./rakazo start", "q w e"],
    ["key e2b_0123456789abcdef0123456789abcdef01234567 refused", "0123456789abcdef0123456789abcdef01234567"],
    ["key dtn_9f8e7d6c5b4a39281706f5e4d3c2b1a0 refused", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"],
    ["novita key sk_AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrSt"],
    ['curl -H "x-daytona-preview-token: pvw-7f3a9c" https://8790-sbx.proxy.daytona.local/', "pvw-7f3a9c"],
    ["e2b-traffic-access-token: tat_91kd83 sent", "tat_91kd83"],
    ["X-Access-Token: envd-5521xz", "envd-5521xz"],
    ["GET https://8790-abc.boat.local/v1/screen?_token=hp_55aa66bb", "hp_55aa66bb"],
  ])("%s", (command, secret) => {
    expect(redactText(command)).not.toContain(secret);
  });

  it("keeps ordinary words and paths", () => {
    expect(redactText("cat downloads/contacts.csv | wc -l")).toBe("cat downloads/contacts.csv | wc -l");
    expect(redactText("ls --all tokens/")).toBe("ls --all tokens/");
  });
});
