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
  ])("%s", (command, secret) => {
    expect(redactText(command)).not.toContain(secret);
  });

  it("keeps ordinary words and paths", () => {
    expect(redactText("cat downloads/contacts.csv | wc -l")).toBe("cat downloads/contacts.csv | wc -l");
    expect(redactText("ls --all tokens/")).toBe("ls --all tokens/");
  });
});
