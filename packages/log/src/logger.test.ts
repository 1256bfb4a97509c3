// The logger on pino with redaction as its formatter.
import { describe, expect, it } from "vitest";
import { createLogger, onLogLine } from "./logger.ts";

function capture() {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", write: (l) => lines.push(l) });
  return { log, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, any>) };
}

describe("logger", () => {
  it("writes one JSON object per line with level, time and message, honouring the level", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", write: (l) => lines.push(l) });
    log.debug("hidden");
    log.info("shown %s", { n: 1 });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ level: "info", msg: "shown %s", n: 1 });
    expect(Number.isNaN(Date.parse(line.time))).toBe(false);
  });

  it("keeps an error's stack and cause, redacted", () => {
    const { log, parsed } = capture();
    const root = new Error("connect refused with Bearer rkz_rootcause12345");
    const error = new Error("loading failed", { cause: root });
    (error as Error & { code?: string }).code = "E_LOAD";
    log.error("agent.run_failed", { error });
    const [line] = parsed();
    expect(line?.error.message).toBe("loading failed");
    expect(line?.error.code).toBe("E_LOAD");
    expect(line?.error.stack).toContain("logger.test.ts");
    expect(line?.error.cause.message).toContain("connect refused");
    expect(line?.error.cause.stack).toContain("logger.test.ts");
    expect(JSON.stringify(line)).not.toContain("rootcause12345");
  });

  it("keeps ids of secrets readable and never writes the secrets themselves", () => {
    const { log, lines, parsed } = capture();
    const capability = "rs1.k1.QUJDREVGR0hJSktMTU5PUFFSU1RVVldY";
    log.info("screen.capability_minted", {
      tokenId: "tok_123",
      capabilityId: "cap_abc",
      screen: { capability_id: "cap_abc", connection_id: "conn_9" },
      "screen.capability_id": "cap_abc",
      token: "rkz_livetoken99999",
      capability,
      ticket: "rs1.k1.ZZZZZZZZZZZZZZZZZZZZZZZZ",
      password: "hunter2",
      apiKey: "plain-key-value",
      cookie: "sid=abc",
      masterKey: "bWFzdGVyLWtleS1ieXRlcw==",
      key: "k1:c2NyZWVuLWtleS1ieXRlcw==",
      homeKey: "home_readable",
      header: "x-rakazo-screen-ticket: opaque-ticket-value",
      env: "SCREEN_CAPABILITY_KEYS=k1:ZW52LWtleS1ieXRlcw== node main.ts",
      url: "http://alice:urlpass77@127.0.0.1:9/screens/rs1.k1.QUJDREVGR0hJSktMTU5PUFFSU1RVVldY/",
      note: `forwarded ${capability} with Authorization: Bearer sekret-bearer-42`,
    });
    const [line] = parsed();
    expect(line).toMatchObject({
      tokenId: "tok_123",
      capabilityId: "cap_abc",
      screen: { capability_id: "cap_abc", connection_id: "conn_9" },
      "screen.capability_id": "cap_abc",
      homeKey: "home_readable",
    });
    for (const secret of [
      "livetoken99999",
      "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY",
      "ZZZZZZZZZZZZZZZZZZZZZZZZ",
      "hunter2",
      "plain-key-value",
      "sid=abc",
      "urlpass77",
      "sekret-bearer-42",
      "bWFzdGVyLWtleS1ieXRlcw",
      "c2NyZWVuLWtleS1ieXRlcw",
      "opaque-ticket-value",
      "ZW52LWtleS1ieXRlcw",
    ]) {
      expect(lines[0]).not.toContain(secret);
    }
  });

  it("redacts the message and child bindings too, and lets listeners see every line", () => {
    const seen: string[] = [];
    const stop = onLogLine((l) => seen.push(l));
    const { log, lines } = capture();
    log.child({ service: "web", authorization: "Bearer abc12345" }).warn("got rkz_inmessage12345");
    stop();
    log.info("after");
    expect(seen).toEqual([lines[0]]);
    expect(lines[0]).toContain('"service":"web"');
    expect(lines[0]).not.toContain("abc12345");
    expect(lines[0]).not.toContain("inmessage12345");
  });

  it("does not pass on values nested past the inspected depth", () => {
    const { log, lines } = capture();
    let deep: Record<string, unknown> = { leaked: "rkz_toodeep123456" };
    for (let i = 0; i < 12; i++) deep = { deep };
    log.info("deep", deep);
    expect(lines[0]).not.toContain("toodeep123456");
  });
});
