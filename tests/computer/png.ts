/**
 * What VER-3's scripted model "sees": a screenshot PNG decoded with node:zlib (8-bit RGB or RGBA,
 * not interlaced — what the supervisor and Chromium write), and where a colour is on it. The
 * scripted model clicks where the button's colour is, as a vision model would aim at it.
 */
import { inflateSync } from "node:zlib";

export interface Pixels {
  readonly width: number;
  readonly height: number;
  /** 3 bytes per pixel, row after row. */
  readonly rgb: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function decodePng(png: Uint8Array): Pixels {
  const buf = Buffer.from(png);
  if (!buf.subarray(0, 8).equals(SIGNATURE)) throw new Error("not a PNG");
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length; ) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString("ascii", at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, color, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      channels = color === 2 ? 3 : color === 6 ? 4 : 0;
      if (depth !== 8 || channels === 0 || interlace !== 0)
        throw new Error(`unsupported PNG (depth ${depth}, colour type ${color}, interlace ${interlace})`);
    } else if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x += 1) {
      const value = raw[y * (stride + 1) + 1 + x] as number;
      const a = x >= channels ? (out[y * stride + x - channels] as number) : 0;
      const b = y > 0 ? (out[(y - 1) * stride + x] as number) : 0;
      const c = x >= channels && y > 0 ? (out[(y - 1) * stride + x - channels] as number) : 0;
      const predicted =
        filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      out[y * stride + x] = (value + predicted) & 0xff;
    }
  }
  if (channels === 3) return { width, height, rgb: out };
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < out.length; i += 4, j += 3) rgb.set(out.subarray(i, i + 3), j);
  return { width, height, rgb };
}

/** The centre of the pixels `match` accepts, and how many there are; undefined when none. */
export function findColour(
  pixels: Pixels,
  match: (r: number, g: number, b: number) => boolean,
): { x: number; y: number; count: number } | undefined {
  let count = 0;
  let sx = 0;
  let sy = 0;
  for (let y = 0; y < pixels.height; y += 1) {
    for (let x = 0; x < pixels.width; x += 1) {
      const i = (y * pixels.width + x) * 3;
      if (match(pixels.rgb[i] as number, pixels.rgb[i + 1] as number, pixels.rgb[i + 2] as number)) {
        count += 1;
        sx += x;
        sy += y;
      }
    }
  }
  return count === 0 ? undefined : { x: Math.round(sx / count), y: Math.round(sy / count), count };
}
