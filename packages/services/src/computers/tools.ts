/**
 * Which of the image's promised tools (PRV-5) this computer actually has. Probed once per
 * machine (`command -v` inside it) and kept in this process for the machine's ref; a
 * replacement machine has a new ref and is probed again. Unknown (null) while no machine runs
 * or when the machine cannot answer (the fake computer has no shell).
 */
import type { Sandbox } from "@rakazo/sandbox";
import type { ServiceContext } from "../context.ts";
import type { ComputerRow } from "./access.ts";

export const PROBED_TOOLS = ["gh", "uv", "pandoc", "pdftotext", "python3"] as const;
export type ProbedTool = (typeof PROBED_TOOLS)[number];

const PROBE = `for t in ${PROBED_TOOLS.join(" ")}; do command -v "$t" >/dev/null 2>&1 && echo "$t"; done; exit 0`;
const MAX_REMEMBERED = 10_000;
const probed = new Map<string, readonly ProbedTool[] | null>();

export async function computerTools(
  ctx: Pick<ServiceContext, "provider">,
  computer: ComputerRow,
): Promise<readonly ProbedTool[] | null> {
  const ref = computer.providerRef;
  if (computer.state !== "running" || !ref || computer.providerKind !== ctx.provider.kind) return null;
  const key = `${ctx.provider.kind}:${ref}`;
  if (probed.has(key)) return probed.get(key) ?? null;
  const tools = await probe(ctx.provider.sandbox(ref));
  if (tools === undefined) return null;
  if (probed.size >= MAX_REMEMBERED) probed.clear();
  probed.set(key, tools);
  return tools;
}

/** The tools found; null when the machine has no shell to ask; undefined when asking failed. */
async function probe(sandbox: Sandbox): Promise<readonly ProbedTool[] | null | undefined> {
  try {
    const result = await sandbox.exec({ argv: ["sh", "-c", PROBE], timeoutMs: 15_000 });
    if (result.exitCode !== 0) return null;
    const found = new Set(result.stdout.split("\n"));
    return PROBED_TOOLS.filter((tool) => found.has(tool));
  } catch {
    // A machine that cannot answer now is asked again next time.
    return undefined;
  }
}
