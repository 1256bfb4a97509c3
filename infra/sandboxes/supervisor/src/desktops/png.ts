/** PNG encoding and frame hashing for observe, with node:zlib only. */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import zlib from "node:zlib";
import type { RawFrame } from "./x11-capture.ts";

const deflate = promisify(zlib.deflate);

/** sha256 of the raw pixels: equal frames hash equal whatever the PNG encoder does (TOOL-2). */
export function frameHash(frame: RawFrame): string {
  return createHash("sha256").update(frame.rgb).digest("hex");
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/** 8-bit RGB PNG; rows use the `Sub` filter, which compresses flat UI areas well at level 1. */
export async function encodePng(frame: RawFrame): Promise<Buffer> {
  const { width, height, rgb } = frame;
  const stride = width * 3;
  const filtered = Buffer.allocUnsafe((stride + 1) * height);
  for (let y = 0; y < height; y += 1) {
    const row = y * stride;
    const out = y * (stride + 1);
    filtered[out] = 1; // Sub
    for (let x = 0; x < 3; x += 1) filtered[out + 1 + x] = rgb[row + x] as number;
    for (let x = 3; x < stride; x += 1) {
      filtered[out + 1 + x] = ((rgb[row + x] as number) - (rgb[row + x - 3] as number)) & 0xff;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(2, 9); // truecolor RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", await deflate(filtered, { level: 1 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
