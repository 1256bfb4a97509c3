/**
 * What operators scrape and probe: `/metrics` (Prometheus text) and `/ready`, served by the API
 * and the worker alike. `/health` stays each process's liveness and is not here.
 */

export { type Readiness, readiness } from "./readiness.ts";
export { type CheckpointObservation, createMetrics, type Metrics } from "./registry.ts";
export { mountOperatorRoutes, type OperatorRoutesOptions } from "./routes.ts";
