/**
 * The TCP sockets a process tree listens on, read from /proc (Linux): each process's socket
 * inodes (`/proc/<pid>/fd`) matched against the LISTEN rows of `/proc/<pid>/net/tcp{,6}`.
 * Addresses are hex in network byte order (127.0.0.1 → `7F000001`, ::1 → `0…01`).
 */
import { readdir, readFile, readlink } from "node:fs/promises";

export interface ListeningSocket {
  /** Hex as /proc shows it, normalised to network byte order: 127.0.0.1 → `7F000001`. */
  readonly address: string;
  readonly port: number;
}

/** The pid and all its descendants (by /proc/<pid>/stat ppid). */
async function processTree(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    // The command name may hold spaces and parentheses: the ppid is the 2nd field after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (ppid) parents.set(Number(name), ppid);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parents) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid);
  }
  return tree;
}

/** /proc spells each 32-bit word in host (little-endian) order; this turns it to network order. */
function networkOrder(hex: string): string {
  return (hex.match(/.{8}/g) ?? []).map((word) => (word.match(/../g) ?? []).reverse().join("")).join("");
}

export async function listeningSocketsOf(root: number): Promise<ListeningSocket[]> {
  const inodes = new Set<string>();
  const pids = await processTree(root);
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    }
  }
  const found: ListeningSocket[] = [];
  for (const table of ["tcp", "tcp6"]) {
    const text = await readFile(`/proc/${root}/net/${table}`, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [address, port] = (cols[1] ?? "").split(":");
      if (cols[3] !== "0A" || !address || !port || !inodes.has(cols[9] ?? "")) continue;
      found.push({ address: networkOrder(address), port: Number.parseInt(port, 16) });
    }
  }
  return found;
}
