export { createE2BProvider, type E2BProviderConfig } from "./e2b.ts";
export { createFamilyBackend, type FamilyBackendOptions, type FamilySdk, METADATA } from "./family.ts";
export { createNovitaProvider, type NovitaProviderConfig } from "./novita.ts";
