import { z } from "zod";
import { computerId, defineContract } from "../define.ts";
import { computerView, networkPolicy } from "../views.ts";

/**
 * Changes the network policy of a computer that is not running (unprovisioned,
 * stopped, failed); CONFLICT with `details.state` otherwise. Applied at the next start.
 */
export const computerSetNetwork = defineContract({
  name: "computer/setNetwork",
  auth: "token",
  input: z.strictObject({ computerId, network: networkPolicy }),
  output: computerView,
});
