import * as contracts from "@rakazo/api-contract";
import { setComputerNetwork } from "@rakazo/services";
import { defineRpc } from "./define.ts";

/** A new network policy for a computer that is not running; recorded in activity. */
export const computerSetNetwork = defineRpc(contracts.computerSetNetwork, setComputerNetwork, {
  activity: (input) => {
    const hosts =
      input.network.mode === "allowlist" ? (input.network.allow ?? []).map((entry) => entry.host) : [];
    return {
      computerId: input.computerId,
      line: `network → ${input.network.mode}${hosts.length > 0 ? ` (${hosts.join(", ")})` : ""}`,
      details: { network: input.network },
    };
  },
});
