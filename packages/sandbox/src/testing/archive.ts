/** In-memory tar archives for tests and hostile-archive corpora (never shipped code). */
import { Readable } from "node:stream";
import tar from "tar-stream";

/** Collects a stream into one buffer (tests and small archives only). */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Builds a tar archive from in-memory entries (tests, hostile-archive corpora). */
export async function buildArchive(
  entries: readonly {
    name: string;
    type?: tar.Header["type"];
    data?: string | Uint8Array;
    linkname?: string;
  }[],
): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) {
    const data = e.data === undefined ? undefined : Buffer.from(e.data);
    const header = { name: e.name, type: e.type ?? "file", linkname: e.linkname, size: data?.length ?? 0 };
    if (data) pack.entry(header, data);
    else pack.entry(header, "");
  }
  pack.finalize();
  return readAll(Readable.from(pack as unknown as AsyncIterable<Buffer>));
}
