/** Test helpers: workspace trees and raw tar surgery for hostile-archive corpora. */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** Writes `files` (relative path → content) under `root`. */
export async function writeTree(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [rel, data] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), data);
  }
}

/** Every regular file under `root` (relative path → bytes); symlinks and others reported as such. */
export async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const name of (await readdir(join(root, rel))).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const info = await lstat(join(root, path));
      if (info.isDirectory()) {
        out[`${path}/`] = "dir";
        await walk(path);
      } else if (info.isFile()) out[path] = (await readFile(join(root, path))).toString("base64");
      else out[path] = "OTHER";
    }
  };
  await walk("");
  return out;
}

export function sampleWorkspace(): Record<string, string | Uint8Array> {
  return {
    "notes/todo.md": "# todo\n- survive anything\n",
    "bots/bot_1/data.bin": randomBytes(300 * 1024),
    "shared/empty.txt": "",
    ".browser-profiles/bot_1/Default/Cookies": randomBytes(4096),
    ".browser-profiles/bot_1/Local State": '{"os_crypt":{}}',
    ".browser-profiles/bot_1/Default/Preferences": "{}",
    ".browser-profiles/bot_1/Default/Sessions/Session_1": "session",
    ".browser-profiles/bot_1/Default/Cache/Cache_Data/data_0": randomBytes(1024),
    ".browser-profiles/bot_1/Default/Code Cache/js/index": "x",
    ".browser-profiles/bot_1/SingletonLock": "host-1",
    ".browser-profiles/bot_1/GPUCache/data_1": "x",
    ".browser-profiles/bot_1/BrowserMetrics/BrowserMetrics-6757A1C2-1F.pma": randomBytes(2048),
  };
}

/** Rewrites the size field of the first tar header (and its checksum): a "size bomb". */
export function patchFirstTarSize(tar: Buffer, size: number): Buffer {
  const out = Buffer.from(tar);
  out.write(`${size.toString(8).padStart(11, "0")}\0`, 124, 12, "ascii");
  out.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i += 1) sum += out[i] as number;
  out.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return out;
}
