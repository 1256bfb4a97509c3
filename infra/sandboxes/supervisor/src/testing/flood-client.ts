/**
 * A hostile view client in its own process (so the flood does not share the measuring test's
 * event loop): `node flood-client.ts <gateway.sock> <ticket> <kind>` opens the gateway's RFB
 * websocket by hand (raw upgrade, masked frames, no library), completes the RFB handshake, prints
 * `ready`, sends the flood when a line arrives on stdin, prints `sent` and stays connected until killed. Kinds: `cut-text` (a ClientCutText
 * announcing ~16 MiB, then 8000 messages of 1 KiB), `one-byte` (the same announcement, then
 * 100 000 messages of 1 byte).
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import { TICKET_HEADER } from "../gateway/vocabulary.ts";

const [socketPath, ticket, kind] = process.argv.slice(2) as [string, string, string];

function frame(payload: Buffer): Buffer {
  const length = payload.length;
  const head = length < 126 ? 2 : 4;
  const out = Buffer.alloc(head + 4 + length);
  out[0] = 0x82;
  if (length < 126) out[1] = 0x80 | length;
  else {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(length, 2);
  }
  const mask = randomBytes(4);
  mask.copy(out, head);
  for (let i = 0; i < length; i += 1) out[head + 4 + i] = (payload[i] as number) ^ (mask[i & 3] as number);
  return out;
}

const announce = Buffer.alloc(8);
announce[0] = 6;
announce.writeInt32BE(16 * 1024 * 1024 - 16, 4);
const piece = kind === "one-byte" ? Buffer.from([0x62]) : Buffer.alloc(1024, 0x61);
const count = kind === "one-byte" ? 100_000 : 8000;
// Frames are built once and written in 64 KiB slices: the client stays cheap, the gateway still
// sees `count` websocket messages.
const stream = Buffer.concat([frame(announce), ...Array.from({ length: count }, () => frame(piece))]);
const flood = Array.from({ length: Math.ceil(stream.length / 65_536) }, (_, i) =>
  stream.subarray(i * 65_536, (i + 1) * 65_536),
);

const socket = net.connect(socketPath);
let received = 0;
let upgraded = false;
let flooding = false;
socket.on("data", (chunk: Buffer) => {
  received += chunk.length;
  if (!upgraded) {
    if (!chunk.toString("latin1").startsWith("HTTP/1.1 101")) {
      console.error(`refused: ${chunk.toString("latin1").split("\r\n")[0]}`);
      process.exit(1);
    }
    upgraded = true;
    received = 0;
    socket.write(frame(Buffer.concat([Buffer.from("RFB 003.008\n"), Buffer.from([1, 0])])));
    return;
  }
  // Version, security types, result and ServerInit have arrived: the filter is past the handshake.
  if (!flooding && received >= 40) {
    flooding = true;
    process.stdout.write("ready\n");
    process.stdin.once("data", () => void send());
  }
});
socket.on("error", (error) => {
  console.error(error.message);
  process.exit(1);
});
socket.on("close", () => process.exit(2));
socket.write(
  `GET /v1/rfb HTTP/1.1\r\nHost: gateway\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n` +
    `${TICKET_HEADER}: ${ticket}\r\n\r\n`,
);

async function send(): Promise<void> {
  for (const bytes of flood) {
    if (!socket.write(bytes)) await new Promise((r) => socket.once("drain", r));
  }
  process.stdout.write("sent\n");
}
