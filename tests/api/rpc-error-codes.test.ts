// Each contract's `errors` against the codes its handler can reach in the source (read with
// the TypeScript checker: tests/support/reachable-codes.ts). A declared code the handler cannot
// reach is a promise the API does not keep; a reachable one left undeclared is an answer the
// OpenAPI document would hide. The codes every RPC can get are declared nowhere but openapi.ts.

import { EVERY_RPC_CAN_ANSWER } from "@rakazo/api/openapi";
import { RPC_CONTRACTS } from "@rakazo/api-contract";
import { beforeAll, describe, expect, it } from "vitest";
import { reachableCodesByRpc } from "../support/reachable-codes.ts";

let reachable: Map<string, Set<string>>;
// Building the program takes seconds (the whole API and services).
beforeAll(() => {
  reachable = reachableCodesByRpc();
}, 120_000);

describe("every contract's declared error codes", () => {
  it("are exactly the codes its handler can reach, less the ones every RPC can get", () => {
    expect([...reachable.keys()].sort()).toEqual(RPC_CONTRACTS.map((c) => c.name).sort());
    // UNKNOWN_RPC: an external RPC while the surface is off, answered before any handler.
    const common = new Set<string>([...EVERY_RPC_CAN_ANSWER, "UNKNOWN_RPC"]);
    for (const contract of RPC_CONTRACTS) {
      const found = [...(reachable.get(contract.name) ?? [])].filter((code) => !common.has(code)).sort();
      expect([...contract.errors].sort(), `${contract.name}: declared vs reachable`).toEqual(found);
      for (const code of contract.errors) expect(common.has(code), `${contract.name}: ${code}`).toBe(false);
    }
  });

  it("tells RPCs apart (the walk does not reach every verb from every handler)", () => {
    expect(reachable.get("space/list")?.size ?? 0).toBeLessThan(3);
    expect(reachable.get("setup/bootstrap")).toContain("ALREADY_BOOTSTRAPPED");
    expect(reachable.get("computer/releaseInterrupted")).toContain("NOT_SERVER_OWNER");
    expect(reachable.get("computer/get")).not.toContain("NOT_SERVER_OWNER");
    // Through viaProvider's map of the provider's errors.
    expect(reachable.get("computer/files/read")).toContain("FILE_NOT_FOUND");
  });
});
