// Which Origin may call the bridge: none (not a browser), a listed one, and loopback pages only
// while the bridge itself listens on loopback.
import { describe, expect, it } from "vitest";
import { isLoopbackHost, originAllowed } from "./origins.ts";

describe("originAllowed", () => {
  it("no Origin and listed origins pass; loopback pages pass only on a loopback bridge", () => {
    const listed = { allowed: ["https://app.example"], loopback: false };
    expect(originAllowed(listed, undefined)).toBe(true);
    expect(originAllowed(listed, "https://app.example")).toBe(true);
    expect(originAllowed(listed, "https://app.example:8443")).toBe(false);
    expect(originAllowed(listed, "http://localhost:5173")).toBe(false);
    const onLoopback = { allowed: [], loopback: true };
    for (const origin of [
      "http://localhost:5173",
      "http://127.0.0.1",
      "https://[::1]:8080",
      "http://127.1.2.3",
    ]) {
      expect(originAllowed(onLoopback, origin), origin).toBe(true);
    }
    for (const origin of [
      "null",
      "http://localhost.evil.example",
      "http://127.0.0.1.evil.example",
      "file://",
    ]) {
      expect(originAllowed(onLoopback, origin), origin).toBe(false);
    }
  });

  it("a bridge on 0.0.0.0 or a public address is not on loopback", () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.53"])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.0.0.9", "bridge.example", "127.0.0.1.example"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
