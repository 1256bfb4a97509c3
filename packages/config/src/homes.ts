import {
  type AgentHomeStore,
  type KeyWrapper,
  LocalAgentHomeStore,
  LocalKeyWrapper,
  loadOrCreateMasterKey,
  ObjectAgentHomeStore,
} from "@rakazo/homes";
import { DOCKER_HOME_GID, DOCKER_HOME_UID } from "@rakazo/sandbox";
import type { RuntimeEnv } from "./env.ts";
import { concreteProviderKind } from "./provider.ts";

/**
 * The workspace store and key wrapper of this installation: object storage when
 * `OBJECT_STORAGE_BUCKET` is set (PER-4), `DATA_DIR/homes` otherwise (PER-3). The master key
 * comes from `RAKAZO_MASTER_KEY`, or is generated once into `DATA_DIR/master.key` (0600).
 * Docker containers bind-mount their home and run as an unprivileged user, so homes restored
 * for them belong to that user.
 */
export async function homesFromEnv(env: RuntimeEnv): Promise<{ homes: AgentHomeStore; keys: KeyWrapper }> {
  const keys = new LocalKeyWrapper(
    await loadOrCreateMasterKey({ configured: env.RAKAZO_MASTER_KEY, dataDir: env.DATA_DIR }),
  );
  const owner =
    concreteProviderKind(env) === "docker" ? { owner: { uid: DOCKER_HOME_UID, gid: DOCKER_HOME_GID } } : {};
  if (!env.OBJECT_STORAGE_BUCKET) {
    return { homes: new LocalAgentHomeStore({ dataDir: env.DATA_DIR, ...owner }), keys };
  }
  const homes = new ObjectAgentHomeStore({
    dataDir: env.DATA_DIR,
    ...owner,
    storage: {
      bucket: env.OBJECT_STORAGE_BUCKET,
      ...(env.OBJECT_STORAGE_ENDPOINT ? { endpoint: env.OBJECT_STORAGE_ENDPOINT } : {}),
      ...(env.OBJECT_STORAGE_REGION ? { region: env.OBJECT_STORAGE_REGION } : {}),
      ...(env.OBJECT_STORAGE_ACCESS_KEY_ID ? { accessKeyId: env.OBJECT_STORAGE_ACCESS_KEY_ID } : {}),
      ...(env.OBJECT_STORAGE_SECRET_ACCESS_KEY
        ? { secretAccessKey: env.OBJECT_STORAGE_SECRET_ACCESS_KEY }
        : {}),
    },
  });
  return { homes, keys };
}
