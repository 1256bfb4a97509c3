/**
 * The view filter and the frame parser as streams: input split anywhere,
 * down to single bytes, gives the same result as one push; a dropped message's payload is never
 * held; nothing pushed earlier is copied again.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CLIENT_HANDSHAKE, rfbMessages } from "../testing/fake-rfb.ts";
import { MAX_HELD, RfbViewFilter } from "./rfb-filter.ts";
import { ClientFrameParser } from "./ws-frame.ts";

const cutTextHeader = (length: number) => {
  const b = Buffer.alloc(8);
  b[0] = 6;
  b.writeInt32BE(length, 4);
  return b;
};

function run(filter: RfbViewFilter, pieces: Buffer[]) {
  const forward: Buffer[] = [];
  let dropped = 0;
  for (const piece of pieces) {
    const out = filter.push(piece);
    expect(out.error).toBeUndefined();
    forward.push(...out.forward.map((b) => Buffer.from(b)));
    dropped += out.dropped.length;
  }
  return { forward: Buffer.concat(forward), dropped };
}

describe("RfbViewFilter streams", () => {
  const stream = Buffer.concat([
    CLIENT_HANDSHAKE,
    rfbMessages.updateRequest(true),
    rfbMessages.clientCutText("x".repeat(5000)),
    rfbMessages.keyEvent(true, 0x61),
    rfbMessages.updateRequest(false),
  ]);
  const expected = Buffer.concat([
    Buffer.from("RFB 003.008\n"),
    Buffer.from([1, 1]),
    rfbMessages.updateRequest(true),
    rfbMessages.updateRequest(false),
  ]);

  it("gives the same output for one push and for single bytes", () => {
    expect(run(new RfbViewFilter(), [stream])).toEqual({ forward: expected, dropped: 2 });
    const bytes = [...stream].map((b) => Buffer.from([b]));
    expect(run(new RfbViewFilter(), bytes)).toEqual({ forward: expected, dropped: 2 });
  });

  it("discards a 16 MiB cut text as it arrives, holding at most a header", () => {
    const filter = new RfbViewFilter();
    run(filter, [CLIENT_HANDSHAKE, cutTextHeader(16 * 1024 * 1024 - 16)]);
    const piece = randomBytes(64 * 1024);
    const started = performance.now();
    for (let i = 0; i < 255; i += 1) expect(filter.push(piece).forward).toEqual([]);
    // The rest of the cut text, then a message that must pass intact.
    const tail = Buffer.alloc(16 * 1024 * 1024 - 16 - 255 * piece.length);
    const out = run(filter, [tail, rfbMessages.updateRequest(true)]);
    expect(out.forward).toEqual(rfbMessages.updateRequest(true));
    // 16 MiB counted off, not buffered: far below the seconds the concatenating filter took.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("refuses a message header it cannot size (fails closed)", () => {
    const filter = new RfbViewFilter();
    run(filter, [CLIENT_HANDSHAKE]);
    expect(filter.push(Buffer.from([77])).error).toMatch(/unknown/);
    expect(filter.push(rfbMessages.updateRequest(true)).error).toBeDefined();
    expect(MAX_HELD).toBeLessThanOrEqual(16);
  });
});

describe("RfbViewFilter handshakes: RFB 3.3 (the server picks security) and 3.7", () => {
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const serverVersion = Buffer.from("RFB 003.008\n");
  const input = Buffer.concat([
    rfbMessages.keyEvent(true, 0x61),
    rfbMessages.pointerEvent(1, 10, 10),
    rfbMessages.clientCutText("pwned"),
  ]);

  it("3.3 with None: ClientInit follows the server's u32 type; input is still dropped", () => {
    const filter = new RfbViewFilter();
    expect(filter.observeServer(serverVersion)).toBeUndefined();
    const version = run(filter, [Buffer.from("RFB 003.003\n")]);
    expect(version.forward).toEqual(Buffer.from("RFB 003.003\n"));
    expect(filter.watchingServer).toBe(true);
    expect(filter.observeServer(u32(1))).toBeUndefined();
    expect(filter.watchingServer).toBe(false);
    const rest = run(filter, [Buffer.from([0]), rfbMessages.updateRequest(false), input]);
    expect(rest).toEqual({
      forward: Buffer.concat([Buffer.from([1]), rfbMessages.updateRequest(false)]),
      dropped: 3,
    });
  });

  it("3.3 with VNC Authentication: the 16-byte response passes, then ClientInit (forced shared)", () => {
    const filter = new RfbViewFilter();
    filter.observeServer(serverVersion);
    run(filter, [Buffer.from("RFB 003.003\n")]);
    // The type and the challenge arrive in one read.
    expect(filter.observeServer(Buffer.concat([u32(2), randomBytes(16)]))).toBeUndefined();
    const response = randomBytes(16);
    const bytes = [...Buffer.concat([response, Buffer.from([0]), input])].map((b) => Buffer.from([b]));
    expect(run(filter, bytes)).toEqual({ forward: Buffer.concat([response, Buffer.from([1])]), dropped: 3 });
  });

  it("3.3: client bytes before the server's type, or a type it cannot follow, end the stream", () => {
    const early = new RfbViewFilter();
    early.observeServer(serverVersion);
    expect(early.push(Buffer.concat([Buffer.from("RFB 003.003\n"), Buffer.from([0])])).error).toMatch(
      /before the server chose/,
    );
    const refused = new RfbViewFilter();
    refused.observeServer(serverVersion);
    run(refused, [Buffer.from("RFB 003.003\n")]);
    expect(refused.observeServer(u32(0))).toMatch(/security type 0/);
    expect(refused.push(Buffer.from([0])).error).toBeDefined();
  });

  it("3.7: the client picks the type as in 3.8", () => {
    const filter = new RfbViewFilter();
    const out = run(filter, [Buffer.from("RFB 003.007\n"), Buffer.from([1, 0]), input]);
    expect(out).toEqual({ forward: Buffer.from("RFB 003.007\n\x01\x01", "latin1"), dropped: 3 });
    expect(new RfbViewFilter().push(Buffer.from("RFB 003.005\n")).error).toMatch(/unsupported RFB version/);
  });
});

describe("ClientFrameParser streams", () => {
  const masked = (opcode: number, payload: Buffer, fin = true) => {
    const mask = randomBytes(4);
    const head =
      payload.length < 126
        ? Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | payload.length])
        : Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    const body = Buffer.from(payload.map((b, i) => b ^ (mask[i & 3] as number)));
    return Buffer.concat([head, mask, body]);
  };

  it("hands data on in pieces and control frames whole, split anywhere", () => {
    const data = randomBytes(3000);
    const wire = Buffer.concat([
      masked(2, data),
      masked(9, Buffer.from("ping!")),
      masked(2, Buffer.from("z")),
    ]);
    for (const size of [1, 7, 1000, wire.length]) {
      const parser = new ClientFrameParser();
      const frames = [];
      for (let i = 0; i < wire.length; i += size) {
        const parsed = parser.push(Buffer.from(wire.subarray(i, i + size)));
        expect(parsed.error).toBeUndefined();
        frames.push(...parsed.frames.map((f) => ({ ...f, payload: Buffer.from(f.payload) })));
      }
      const binary = Buffer.concat(frames.filter((f) => f.opcode === 2).map((f) => f.payload));
      expect(binary).toEqual(Buffer.concat([data, Buffer.from("z")]));
      expect(frames.filter((f) => f.opcode === 9)).toEqual([
        { opcode: 9, fin: true, payload: Buffer.from("ping!") },
      ]);
    }
  });

  it("refuses unmasked frames and oversized control frames", () => {
    expect(new ClientFrameParser().push(Buffer.from([0x82, 0x01, 0x00])).error?.code).toBe(1002);
    const longPing = Buffer.from([0x89, 0x80 | 126, 0, 200, 0, 0, 0, 0]);
    expect(new ClientFrameParser().push(longPing).error?.code).toBe(1002);
  });
});
