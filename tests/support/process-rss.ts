/**
 * Resident memory of the soak's processes: host processes by pid (`/proc/<pid>/status`, VmRSS)
 * and a Docker computer's processes as the engine lists them (`docker top <container> -eo
 * pid,rss,args`), grouped by what they are (Xvfb, Chromium, x11vnc, supervisor). Chromium's
 * processes are summed: shared pages count in each, so the sum is an upper bound, but the same
 * one at every sample, which is what a "flat" comparison needs.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

export type RssGroups = Record<string, { kib: number; processes: number }>;

export async function hostRssKib(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** What a computer's process is, by its command line. */
export function processGroup(args: string): string {
  if (/^\S*Xvfb\b/.test(args)) return "Xvfb";
  if (/^\S*x11vnc\b/.test(args)) return "x11vnc";
  if (/chrom(e|ium)/.test(args.split(" ")[0] ?? "")) return "Chromium";
  if (/^\S*node\b.*supervisor/.test(args)) return "supervisor";
  return "other";
}

export function groupTop(output: string): RssGroups {
  const groups: RssGroups = {};
  for (const line of output.split("\n").slice(1)) {
    const match = /^\s*\d+\s+(\d+)\s+(.+)$/.exec(line);
    if (!match) continue;
    const group = processGroup(match[2] as string);
    const entry = groups[group] ?? { kib: 0, processes: 0 };
    entry.kib += Number(match[1]);
    entry.processes += 1;
    groups[group] = entry;
  }
  return groups;
}

export async function containerRss(container: string): Promise<RssGroups> {
  const { stdout } = await run("docker", ["top", container, "-eo", "pid,rss,args"], { timeout: 30_000 });
  return groupTop(stdout);
}
