// BRW-8: which mode a bot's policy gives a mutating tool call, and the rule that decided.
import { describe, expect, it } from "vitest";
import { describeMutation } from "./describe.ts";
import { decide, domainMatches, hostOf, normalizeMutationPolicy } from "./policy.ts";

describe("the mutation guard's rules", () => {
  const policy = normalizeMutationPolicy({
    mode: "ask",
    tools: { shell: "deny", browser_act: "allow" },
    domains: [
      { domain: "example.test", mode: "allow" },
      { domain: "*.pay.example.test", mode: "deny" },
    ],
  });

  it("takes the policy's mode for a tool without a rule", () => {
    expect(decide(policy, "write_file", { path: "a" })).toEqual({ mode: "ask", rule: "default" });
    expect(decide({ mode: "deny" }, "computer_act", {})).toEqual({ mode: "deny", rule: "default" });
    expect(decide({ mode: "allow" }, "browser_navigate", { url: "https://x.test" }).mode).toBe("allow");
  });

  it("a tool's rule overrides the mode", () => {
    expect(decide(policy, "shell", { command: "ls" })).toEqual({ mode: "deny", rule: "tool shell" });
    expect(decide(policy, "browser_act", { actions: [] })).toEqual({
      mode: "allow",
      rule: "tool browser_act",
    });
  });

  it("a domain rule decides browser_navigate: the domain and its subdomains, the longest match first", () => {
    const nav = (url: string) => decide(policy, "browser_navigate", { url });
    expect(nav("https://example.test/a")).toEqual({ mode: "allow", rule: "domain example.test" });
    expect(nav("http://www.EXAMPLE.test:8080/")).toEqual({ mode: "allow", rule: "domain example.test" });
    expect(nav("https://checkout.pay.example.test/")).toEqual({
      mode: "deny",
      rule: "domain pay.example.test",
    });
    expect(nav("https://pay.example.test/")).toEqual({ mode: "deny", rule: "domain pay.example.test" });
    // Not a subdomain, only a similar name: the default decides.
    expect(nav("https://notexample.test/")).toEqual({ mode: "ask", rule: "default" });
    expect(nav("https://example.test.evil.test/")).toEqual({ mode: "ask", rule: "default" });
    // A URL that does not parse matches no domain rule.
    expect(nav("not a url")).toEqual({ mode: "ask", rule: "default" });
  });

  it("domain rules are for navigation only", () => {
    expect(decide(policy, "write_file", { path: "example.test" }).rule).toBe("default");
  });

  it("hosts and domains compare lower-case, without a trailing dot or a leading wildcard", () => {
    expect(hostOf("https://Example.Test./x")).toBe("example.test");
    expect(hostOf(42)).toBeUndefined();
    expect(domainMatches("*.example.test", "a.example.test")).toBe(true);
    expect(domainMatches(".example.test", "example.test")).toBe(true);
    expect(domainMatches("", "example.test")).toBe(false);
  });

  it("stores domains normalized, once each (the last rule wins), and drops unknown tools", () => {
    expect(
      normalizeMutationPolicy({
        mode: "allow",
        tools: { read_file: "deny" } as never,
        domains: [
          { domain: "*.A.test", mode: "deny" },
          { domain: "a.test", mode: "ask" },
        ],
      }),
    ).toEqual({ mode: "allow", domains: [{ domain: "a.test", mode: "ask" }] });
  });

  it("describes a pending action without typed text, and redacted", () => {
    expect(
      describeMutation("browser_act", {
        actions: [
          { type: "fill", ref: "e1", text: "hunter2" },
          { type: "click", ref: "e2" },
        ],
      }),
    ).toBe("browser_act fill e1 (7 chars), click e2");
    expect(describeMutation("shell", { command: "curl -H 'Authorization: Bearer abc.def' x" })).not.toContain(
      "abc.def",
    );
    expect(describeMutation("write_file", { path: "a.txt", size: 3 })).toBe("write_file a.txt (3 bytes)");
  });
});
