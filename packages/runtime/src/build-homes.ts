import type { HomesSettings } from "@rakazo/config";
import {
  type AgentHomeStore,
  type KeyWrapper,
  LocalAgentHomeStore,
  LocalKeyWrapper,
  loadOrCreateMasterKey,
  ObjectAgentHomeStore,
} from "@rakazo/homes";
import type { ProviderCapabilities } from "@rakazo/sandbox";

export interface BuiltHomes {
  readonly store: AgentHomeStore;
  readonly keys: KeyWrapper;
}

/**
 * The workspace store and key wrapper of this installation: object storage when configured
 * (PER-4), `DATA_DIR/homes` otherwise (PER-3). The master key comes from `RAKAZO_MASTER_KEY`,
 * or is generated once into `DATA_DIR/master.key` (0600). Homes restored for a provider that
 * mounts them belong to the user its machines run as (`capabilities.homeOwner`).
 */
export async function buildHomes(
  homes: HomesSettings | BuiltHomes,
  capabilities: ProviderCapabilities,
): Promise<BuiltHomes> {
  if ("store" in homes) return homes;
  const keys = new LocalKeyWrapper(
    await loadOrCreateMasterKey({ configured: homes.masterKey, dataDir: homes.dataDir }),
  );
  const owner = capabilities.homeOwner ? { owner: capabilities.homeOwner } : {};
  if (!homes.objectStorage) {
    return { store: new LocalAgentHomeStore({ dataDir: homes.dataDir, ...owner }), keys };
  }
  const store = new ObjectAgentHomeStore({ dataDir: homes.dataDir, ...owner, storage: homes.objectStorage });
  return { store, keys };
}
