/**
 * At start, after a provider switch (the launcher resolved a different kind than some computers
 * are on): say which computers are elsewhere and what to do. Stopped ones move on their next
 * start anyway (PRV-3 replacement, workspace restored); `./rakazo computers --move-stopped` moves
 * them now and removes their old machines. Running ones stay reachable only through their
 * own provider until stopped (docs/decisions.md, "Launcher and operator commands").
 */
import { connectDatabase } from "@rakazo/db";
import type { Logger } from "@rakazo/log";
import { listAllComputers } from "@rakazo/services";

export async function reportOtherProviderComputers(options: {
  databaseUrl: string;
  provider: string;
  log: Logger;
}): Promise<number> {
  const database = connectDatabase(options.databaseUrl, { max: 1 });
  try {
    const elsewhere = (await listAllComputers(database)).filter((c) => c.providerKind !== options.provider);
    if (elsewhere.length === 0) return 0;
    const stopped = elsewhere.filter((c) => c.state === "stopped" || c.state === "failed");
    options.log.warn("provider.computers_elsewhere", {
      provider: options.provider,
      computers: elsewhere.map((c) => ({ id: c.id, providerKind: c.providerKind, state: c.state })),
      hint:
        `${stopped.length} stopped: they move on their next start, or now with ./rakazo computers --move-stopped; ` +
        `${elsewhere.length - stopped.length} not stopped: stop them on their own provider first`,
    });
    return elsewhere.length;
  } finally {
    await database.close();
  }
}
