/**
 * A transcript's picture of an observation: the frame a tool returned, shrunk to at most
 * `THUMBNAIL_WIDTH` pixels wide (each output pixel is the mean of up to 2×2 samples of the
 * block it covers) and encoded as an 8-bit RGB PNG with node:zlib. Screens are mostly flat UI, so a
 * 1280×800 desktop becomes a 320×200 PNG of a few kilobytes to a few tens; one over
 * `maxBytes` is tried at half the width once, then left out (the transcript says "no picture").
 *
 * Decoding accepts what the supervisor and Chromium write (8-bit RGB or RGBA, not
 * interlaced); anything else is no thumbnail, never an error for the run.
 */
import zlib from "node:zlib";

export const THUMBNAIL_WIDTH = 320;

interface Pixels {
  readonly width: number;
  readonly height: number;
  /** 3 bytes per pixel, row after row. */
  readonly rgb: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Frames larger than this are not decoded (a screen is far smaller). */
const MAX_PIXELS = 4096 * 4096;

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function decodePng(png: Uint8Array): Pixels | undefined {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (buf.length < 8 || !buf.subarray(0, 8).equals(SIGNATURE)) return undefined;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at + 8 <= buf.length; ) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString("ascii", at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      channels = data[9] === 2 ? 3 : data[9] === 6 ? 4 : 0;
      if (data[8] !== 8 || channels === 0 || data[12] !== 0) return undefined;
      if (width === 0 || height === 0 || width * height > MAX_PIXELS) return undefined;
    } else if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  if (channels === 0) return undefined;
  const stride = width * channels;
  const raw = zlib.inflateSync(Buffer.concat(idat), { maxOutputLength: (stride + 1) * height });
  if (raw.length < (stride + 1) * height) return undefined;
  const out = new Uint8Array(width * height * channels);
  // One loop per filter type (the supervisor writes Sub, Chromium any): the hot path of a thumbnail.
  for (let y = 0; y < height; y += 1) {
    const src = y * (stride + 1) + 1;
    const dst = y * stride;
    const up = dst - stride;
    const filter = raw[src - 1];
    if (filter === 0 || (filter === 2 && y === 0)) {
      out.set(raw.subarray(src, src + stride), dst);
    } else if (filter === 1) {
      out.set(raw.subarray(src, src + channels), dst);
      for (let x = channels; x < stride; x += 1) {
        out[dst + x] = ((raw[src + x] as number) + (out[dst + x - channels] as number)) & 0xff;
      }
    } else if (filter === 2) {
      for (let x = 0; x < stride; x += 1) {
        out[dst + x] = ((raw[src + x] as number) + (out[up + x] as number)) & 0xff;
      }
    } else {
      for (let x = 0; x < stride; x += 1) {
        const a = x >= channels ? (out[dst + x - channels] as number) : 0;
        const b = y > 0 ? (out[up + x] as number) : 0;
        const c = x >= channels && y > 0 ? (out[up + x - channels] as number) : 0;
        const predicted = filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
        out[dst + x] = ((raw[src + x] as number) + predicted) & 0xff;
      }
    }
  }
  if (channels === 3) return { width, height, rgb: out };
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < out.length; i += 4, j += 3) rgb.set(out.subarray(i, i + 3), j);
  return { width, height, rgb };
}

function shrink(source: Pixels, maxWidth: number): Pixels {
  if (source.width <= maxWidth) return source;
  const width = maxWidth;
  const height = Math.max(1, Math.round((source.height * width) / source.width));
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y += 1) {
    const y0 = Math.floor((y * source.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * source.height) / height));
    for (let x = 0; x < width; x += 1) {
      const x0 = Math.floor((x * source.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * source.width) / width));
      let r = 0;
      let g = 0;
      let b = 0;
      let n = 0;
      // At most 2×2 samples per block: a screen's UI is flat enough, and it keeps this cheap.
      const stepY = Math.max(1, (y1 - y0) >> 1);
      const stepX = Math.max(1, (x1 - x0) >> 1);
      for (let sy = y0; sy < y1; sy += stepY) {
        for (let sx = x0; sx < x1; sx += stepX) {
          const i = (sy * source.width + sx) * 3;
          r += source.rgb[i] as number;
          g += source.rgb[i + 1] as number;
          b += source.rgb[i + 2] as number;
          n += 1;
        }
      }
      const o = (y * width + x) * 3;
      rgb[o] = Math.round(r / n);
      rgb[o + 1] = Math.round(g / n);
      rgb[o + 2] = Math.round(b / n);
    }
  }
  return { width, height, rgb };
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

function encodePng({ width, height, rgb }: Pixels): Buffer {
  const stride = width * 3;
  const filtered = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y += 1) {
    const row = y * stride;
    const out = y * (stride + 1);
    filtered[out] = 1; // Sub
    for (let x = 0; x < stride; x += 1) {
      const left = x >= 3 ? (rgb[row + x - 3] as number) : 0;
      filtered[out + 1 + x] = ((rgb[row + x] as number) - left) & 0xff;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8);
  header.writeUInt8(2, 9); // RGB
  return Buffer.concat([
    SIGNATURE,
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(filtered, { level: 6 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The thumbnail of a PNG frame, at most `maxBytes`; undefined when it cannot be made that small. */
export function thumbnailOf(png: Uint8Array, maxBytes: number): Uint8Array | undefined {
  let pixels: Pixels | undefined;
  try {
    pixels = decodePng(png);
  } catch {
    return undefined;
  }
  if (!pixels) return undefined;
  for (const width of [THUMBNAIL_WIDTH, THUMBNAIL_WIDTH / 2]) {
    const encoded = encodePng(shrink(pixels, width));
    if (encoded.length <= maxBytes) return encoded;
  }
  return undefined;
}
