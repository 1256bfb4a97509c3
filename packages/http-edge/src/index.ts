/**
 * What every listener (API, web, bridge) checks before a handler runs: the Host it is asked
 * under, the body's declared type and its size, all from the headers. Nothing here reads a body.
 */
export { BodyTooLargeError, bodyTooLarge, isBodyTooLarge, limitBody } from "./body-limit.ts";
export { allowHosts, hostnameOf, hostnamesOf, isAllowedOrigin, isLoopbackName } from "./host-allowlist.ts";
export { isJsonContentType, notJsonRefusal, requireJsonBody } from "./json-only.ts";
export { isLocalClient, isLoopbackAddress } from "./peer.ts";
export { EDGE_REFUSALS, type EdgeRefusalCode, edgeRefusal } from "./refusal.ts";
