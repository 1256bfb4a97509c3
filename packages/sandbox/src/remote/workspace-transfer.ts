/**
 * Workspace archives to and from a remote machine in bounded memory (homes may be gigabytes):
 * the archive lives as a file in the machine's /tmp and crosses the provider's file API one
 * chunk at a time, so the host holds about one chunk, never the workspace. Export: the
 * workspace script writes the tar, each chunk is cut out with `dd` and read. Import: the host
 * validates the archive into a staging directory first (`extractArchive`, PER-6, with every
 * limit of docs/security.md), repacks it, and appends the repacked tar chunk by chunk to a file
 * the workspace script then imports. A chunk written or read is removed at once; the machine's
 * tar file is removed when the transfer ends, however it ends.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { extractArchive, packDirectory } from "../archive.ts";
import { SandboxError } from "../errors.ts";
import { quote } from "./shell.ts";
import type { RemoteMachine } from "./surface.ts";

/** Bytes per file-API call; a multiple of dd's 1 MiB block. */
const CHUNK_MIB = 8;
const CHUNK = CHUNK_MIB * 1024 ** 2;

/** Runs `fn` on the machine (the runtime's `withMachine`, which reopens stale handles). */
type OnMachine = <T>(fn: (machine: RemoteMachine) => Promise<T>) => Promise<T>;
/** Runs one workspace-script operation; throws its stable code on a non-zero exit. */
type FileOp = (machine: RemoteMachine, op: string, rel: string, ...args: string[]) => Promise<string>;

async function shell(on: OnMachine, command: string): Promise<string> {
  const result = await on((machine) => machine.run({ command, timeoutMs: 0 }));
  if (result.exitCode !== 0) {
    throw new SandboxError(
      "SANDBOX_PROVIDER_ERROR",
      `workspace transfer: ${result.stderr.trim() || command}`,
    );
  }
  return result.stdout;
}

const scratch = (kind: string) => `/tmp/.rakazo-${kind}-${randomBytes(8).toString("hex")}`;

/** The workspace as a tar stream pulled from the machine one chunk at a time. */
export async function exportWorkspaceChunked(on: OnMachine, fileOp: FileOp): Promise<Readable> {
  const out = `${scratch("export")}.tar`;
  await on((machine) => fileOp(machine, "export", "", out));
  const remove = () => shell(on, `rm -f -- ${quote(out)} ${quote(`${out}.part`)}`).catch(() => undefined);
  let size: number;
  try {
    size = Number((await shell(on, `stat -c %s -- ${quote(out)}`)).trim());
  } catch (error) {
    await remove();
    throw error;
  }
  async function* chunks() {
    try {
      for (let index = 0; index * CHUNK < size; index += 1) {
        const part = `${out}.part`;
        await shell(
          on,
          `dd if=${quote(out)} of=${quote(part)} bs=1048576 skip=${index * CHUNK_MIB} count=${CHUNK_MIB} 2>/dev/null`,
        );
        const bytes = await on((machine) => machine.readFile(part));
        const expected = Math.min(CHUNK, size - index * CHUNK);
        if (bytes.byteLength !== expected) {
          throw new SandboxError(
            "SANDBOX_PROVIDER_ERROR",
            `workspace export: chunk ${index} has ${bytes.byteLength} bytes, expected ${expected}`,
          );
        }
        yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      }
    } finally {
      // Also when the reader stops early (the stream is destroyed).
      await remove();
    }
  }
  // Not object mode: one chunk ahead at most (the byte high-water mark is below a chunk).
  return Readable.from(chunks(), { objectMode: false });
}

/** Replaces the machine's workspace with `tar`'s contents, validated on the host first (PER-6). */
export async function importWorkspaceChunked(on: OnMachine, fileOp: FileOp, tar: Readable): Promise<void> {
  const staging = await mkdtemp(join(tmpdir(), "rakazo-remote-import-"));
  const upload = `${scratch("import")}.tar`;
  let uploaded = false;
  try {
    const dir = join(staging, "workspace");
    await extractArchive(tar, dir);
    // Nothing reaches the machine before the whole archive passed validation.
    await shell(on, `: > ${quote(upload)}`);
    uploaded = true;
    const part = `${upload}.part`;
    const send = async (bytes: Buffer) => {
      await on((machine) =>
        machine.writeFile(part, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)),
      );
      await shell(on, `cat -- ${quote(part)} >> ${quote(upload)} && rm -f -- ${quote(part)}`);
    };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    for await (const chunk of packDirectory(dir)) {
      pending.push(chunk as Buffer);
      pendingBytes += (chunk as Buffer).length;
      if (pendingBytes >= CHUNK) {
        const whole = Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
        for (let at = 0; at + CHUNK <= whole.length; at += CHUNK) await send(whole.subarray(at, at + CHUNK));
        const rest = whole.length % CHUNK;
        if (rest > 0) {
          pending = [whole.subarray(whole.length - rest)];
          pendingBytes = rest;
        }
      }
    }
    if (pendingBytes > 0) await send(Buffer.concat(pending));
    // The script removes the uploaded tar whatever happens.
    uploaded = false;
    await on((machine) => fileOp(machine, "import", "", upload));
  } finally {
    if (uploaded)
      await shell(on, `rm -f -- ${quote(upload)} ${quote(`${upload}.part`)}`).catch(() => undefined);
    await rm(staging, { recursive: true, force: true });
  }
}
