import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { THUMBNAIL_WIDTH, thumbnailOf } from "./thumbnail.ts";

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, crc]);
}

/** An RGBA PNG, no filter: the left half red, the right half blue. */
function halves(width: number, height: number): Buffer {
  const rows = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const at = y * (width * 4 + 1) + 1 + x * 4;
      rows.set(x < width / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], at);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", zlib.deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The first pixel of row 0 and the last, from an RGB PNG with Sub-filtered rows. */
function corners(png: Uint8Array): { width: number; height: number; left: number[]; right: number[] } {
  const buf = Buffer.from(png);
  const width = buf.readUInt32BE(16);
  const height = buf.readUInt32BE(20);
  const idat = buf.subarray(41, 41 + buf.readUInt32BE(33));
  const raw = zlib.inflateSync(idat);
  const row = [...raw.subarray(1, 1 + width * 3)];
  for (let x = 3; x < row.length; x += 1) row[x] = ((row[x] as number) + (row[x - 3] as number)) & 0xff;
  return { width, height, left: row.slice(0, 3), right: row.slice(-3) };
}

describe("observation thumbnails", () => {
  it("shrinks a frame to the thumbnail width, keeping its aspect and colours", () => {
    const thumb = thumbnailOf(halves(1280, 800), 64 * 1024);
    expect(thumb).toBeDefined();
    const seen = corners(thumb as Uint8Array);
    expect(seen).toMatchObject({ width: THUMBNAIL_WIDTH, height: 200 });
    expect(seen.left).toEqual([255, 0, 0]);
    expect(seen.right).toEqual([0, 0, 255]);
  });

  it("keeps a small frame's size and refuses what it cannot make small enough", () => {
    expect(corners(thumbnailOf(halves(100, 40), 64 * 1024) as Uint8Array)).toMatchObject({ width: 100 });
    expect(thumbnailOf(halves(1280, 800), 10)).toBeUndefined();
  });

  it("answers no thumbnail for what is not a PNG it reads", () => {
    expect(thumbnailOf(Buffer.from("not a png"), 64 * 1024)).toBeUndefined();
    expect(thumbnailOf(halves(10, 10).subarray(0, 40), 64 * 1024)).toBeUndefined();
  });
});
