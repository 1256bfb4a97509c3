/**
 * The conformance suite of a computer's gateway (SCR-1..3, TRM-6): the supervisor's screen
 * gateway and the fake provider's terminal gateway both run it, so what the gateway core decides
 * (ticket check, reject→status table, close codes, the revocation file) is held the same on both.
 * A behaviour only one gateway has stays in that gateway's own tests.
 *
 * The client speaks raw HTTP/1.1 upgrades (no websocket library), so any listener is reached the
 * same way: a Unix socket or loopback TCP.
 */
import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";
import http from "node:http";
import type { Duplex } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  newCapabilityId,
  type ScreenClaims,
  type ScreenPolicy,
  sealCapability,
} from "../capability-codec.ts";
import { CLOSE_EXPIRED, CLOSE_REVOKED, CLOSE_SLOT_CLOSED, TICKET_HEADER } from "../gateway.ts";
import {
  formatRevocations,
  type GatewayRejection,
  gatewayStateFiles,
  type RevocationRule,
  readGatewayState,
} from "../gateway-core.ts";
import { TERMINAL_GATEWAY_PATH } from "../terminal-frames.ts";

/** A started, configured gateway with one bot whose slot is running and whose terminal is started. */
export interface GatewayUnderTest {
  readonly endpoint: { readonly socketPath: string } | { readonly host: string; readonly port: number };
  /** Where the gateway keeps its key and revocation files. */
  readonly stateDir: string;
  /** The key the gateway was configured with, and its id. */
  readonly key: { readonly kid: string; readonly key: Buffer };
  /** The bot's place: its tickets carry these claims. */
  readonly computerId: string;
  readonly botId: string;
  readonly slot: { readonly index: number; readonly generation: number };
  /** A live session this gateway serves: the upgrade path and the (non-view) ticket policy. */
  readonly session: { readonly path: string; readonly policy: ScreenPolicy };
  revoke(rules: readonly RevocationRule[]): Promise<void>;
  /** Tears the bot's slot down (its desktop released). */
  closeSlot(): Promise<void>;
  stopTerminal(): Promise<void>;
  /** Makes the gateway read its state directory again (a restart, for one that reads it once). */
  reload(): Promise<void>;
  close(): Promise<void>;
}

export interface GatewayContractOptions {
  readonly name: string;
  readonly create: () => Promise<GatewayUnderTest>;
}

interface Upgrade {
  readonly status: number;
  readonly body: string;
  /** The close code the gateway sent (1006: the socket ended without a close frame). */
  readonly closed: Promise<number>;
  end(): void;
}

/** Sends a websocket upgrade; resolves with the 101 and its session, or with the refusal. */
function upgrade(gateway: GatewayUnderTest, path: string, ticket: string | undefined): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      ...gateway.endpoint,
      path,
      method: "GET",
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        ...(ticket === undefined ? {} : { [TICKET_HEADER]: ticket }),
      },
    });
    request.once("error", reject);
    request.once("response", (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body, closed: Promise.resolve(1006), end: () => {} }),
      );
    });
    request.once("upgrade", (_response, socket, head) => {
      resolve({ status: 101, body: "", closed: closeCode(socket, head), end: () => socket.destroy() });
    });
    request.end();
  });
}

/** Reads server frames (unmasked) until the close frame; its code. */
function closeCode(socket: Duplex, head: Buffer): Promise<number> {
  return new Promise((resolve) => {
    let pending = head;
    const read = (): void => {
      while (pending.length >= 2) {
        const opcode = (pending[0] ?? 0) & 0x0f;
        let length = (pending[1] ?? 0) & 0x7f;
        let at = 2;
        if (length === 126) {
          if (pending.length < 4) return;
          length = pending.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (pending.length < 10) return;
          length = Number(pending.readBigUInt64BE(2));
          at = 10;
        }
        if (pending.length < at + length) return;
        if (opcode === 0x8) {
          resolve(length >= 2 ? pending.readUInt16BE(at) : 1005);
          socket.destroy();
          return;
        }
        pending = pending.subarray(at + length);
      }
    };
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      read();
    });
    socket.on("error", () => undefined);
    socket.once("close", () => resolve(1006));
    read();
  });
}

/** `GET /v1/screen` with a ticket: the status and the JSON answer. */
function check(
  gateway: GatewayUnderTest,
  ticket: string | undefined,
  path = "/v1/screen",
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        ...gateway.endpoint,
        path,
        method: "GET",
        headers: ticket === undefined ? {} : { [TICKET_HEADER]: ticket },
      },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(body) }));
      },
    );
    request.once("error", reject);
    request.end();
  });
}

export function runGatewayContract(options: GatewayContractOptions): void {
  describe(`gateway contract: ${options.name}`, { timeout: 15_000 }, () => {
    let gateway: GatewayUnderTest;
    const open: Upgrade[] = [];

    beforeEach(async () => {
      gateway = await options.create();
    });
    afterEach(async () => {
      for (const session of open.splice(0)) session.end();
      await gateway.close();
    });

    function claims(overrides: Partial<ScreenClaims> = {}): ScreenClaims {
      const now = Date.now();
      return {
        id: newCapabilityId(),
        computerId: gateway.computerId,
        botId: gateway.botId,
        slot: gateway.slot.index,
        generation: gateway.slot.generation,
        policy: gateway.session.policy,
        subject: "usr_contract",
        issuedAt: now,
        expiresAt: now + 60_000,
        ...overrides,
      };
    }
    const ticket = (c: ScreenClaims = claims(), key = gateway.key.key, kid = gateway.key.kid): string =>
      sealCapability(key, kid, "gateway", c);

    async function session(t: string = ticket()): Promise<Upgrade> {
      const opened = await upgrade(gateway, gateway.session.path, t);
      expect(opened.status, opened.body).toBe(101);
      open.push(opened);
      return opened;
    }

    /**
     * The refusal both ways (`GET /v1/screen` and the upgrade). The status is written here, not
     * read from the core's table, so a changed table entry fails every gateway.
     */
    async function expectRefused(t: string | undefined, reason: GatewayRejection, status: number) {
      expect(await check(gateway, t), `GET /v1/screen, ${reason}`).toEqual({
        status,
        body: { ok: false, reason },
      });
      const refused = await upgrade(gateway, gateway.session.path, t);
      expect(
        { status: refused.status, body: JSON.parse(refused.body || "{}") },
        `upgrade, ${reason}`,
      ).toEqual({
        status,
        body: { ok: false, reason },
      });
    }

    it("serves a valid ticket: GET /v1/screen answers ok with its policy, the upgrade opens a session", async () => {
      const answer = await check(gateway, ticket());
      expect(answer).toMatchObject({ status: 200, body: { ok: true, policy: gateway.session.policy } });
      await session();
      expect(await check(gateway, ticket(), "/v1/other")).toEqual({
        status: 404,
        body: { ok: false, reason: "bad_request" },
      });
    });

    it("refuses a missing, malformed, tampered, foreign-sealed or unknown-key ticket", async () => {
      await expectRefused(undefined, "missing_ticket", 401);
      await expectRefused("not-a-ticket", "malformed", 401);
      const good = ticket();
      const last = good.at(-3) === "A" ? "B" : "A";
      await expectRefused(`${good.slice(0, -3)}${last}${good.slice(-2)}`, "forged", 401);
      await expectRefused(ticket(claims(), randomBytes(32)), "forged", 401);
      await expectRefused(ticket(claims(), gateway.key.key, "kother"), "unknown_key", 401);
    });

    it("refuses an expired ticket and one naming another computer, even sealed with this one's key", async () => {
      const now = Date.now();
      await expectRefused(ticket(claims({ issuedAt: now - 2000, expiresAt: now - 1000 })), "expired", 403);
      await expectRefused(ticket(claims({ computerId: "cmp_other00000000000000" })), "wrong_computer", 403);
    });

    it("a terminal ticket opens only the PTY path, a screen ticket never the PTY", async () => {
      const terminal = await upgrade(gateway, "/v1/rfb", ticket(claims({ policy: "terminal" })));
      expect([terminal.status, JSON.parse(terminal.body)]).toEqual([
        403,
        { ok: false, reason: "wrong_policy" },
      ]);
      for (const policy of ["view", "control"] as const) {
        const screen = await upgrade(gateway, TERMINAL_GATEWAY_PATH, ticket(claims({ policy })));
        expect([screen.status, JSON.parse(screen.body)]).toEqual([
          403,
          { ok: false, reason: "wrong_policy" },
        ]);
      }
    });

    it("refuses a terminal ticket while the bot's terminal is stopped", async () => {
      await gateway.stopTerminal();
      const refused = await upgrade(gateway, TERMINAL_GATEWAY_PATH, ticket(claims({ policy: "terminal" })));
      expect([refused.status, JSON.parse(refused.body)]).toEqual([
        410,
        { ok: false, reason: "terminal_stopped" },
      ]);
    });

    it("revocation closes a live session (4001) and refuses its ticket afterwards, across a reload", async () => {
      const c = claims();
      const live = await session(ticket(c));
      await gateway.revoke([{ id: c.id, expiresAt: Date.now() + 60_000 }]);
      expect(await live.closed).toBe(CLOSE_REVOKED);
      await expectRefused(ticket(c), "revoked", 403);
      await gateway.reload();
      await expectRefused(ticket(c), "revoked", 403);
    });

    it("keeps revocations in the shared file format, and reads rules written in it", async () => {
      const revoked = claims();
      await gateway.revoke([{ id: revoked.id, expiresAt: Date.now() + 60_000 }]);
      expect(readGatewayState(gateway.stateDir, Date.now()).rules.map((rule) => rule.id)).toContain(
        revoked.id,
      );

      const written = claims();
      const rule: RevocationRule = {
        botId: gateway.botId,
        policy: written.policy,
        issuedAtOrBefore: written.issuedAt,
        expiresAt: Date.now() + 60_000,
      };
      appendFileSync(gatewayStateFiles(gateway.stateDir).rules, formatRevocations([rule]));
      await gateway.reload();
      await expectRefused(ticket(written), "revoked", 403);
      // Capabilities issued after the rule are served.
      await session(ticket(claims({ issuedAt: written.issuedAt + 5 })));
    });

    it("a slot's teardown closes its sessions (4002); its tickets are then refused as slot_gone", async () => {
      const live = await session();
      await gateway.closeSlot();
      expect(await live.closed).toBe(CLOSE_SLOT_CLOSED);
      await expectRefused(ticket(), "slot_gone", 410);
    });

    it("closes a session when its capability expires (4003)", async () => {
      const expiresAt = Date.now() + 800;
      const live = await session(ticket(claims({ expiresAt })));
      expect(await live.closed).toBe(CLOSE_EXPIRED);
      expect(Date.now() - expiresAt).toBeLessThan(1000);
    });
  });
}
