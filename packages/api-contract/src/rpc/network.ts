import { z } from "zod";
import { computerId, defineContract } from "../define.ts";
import { computerView, networkPolicy } from "../views.ts";

export const computerSetNetwork = defineContract({
  name: "computer/setNetwork",
  auth: "token",
  summary: "Change a computer's network policy",
  description:
    "Changes the network policy of a computer that is not running (unprovisioned, stopped, failed); CONFLICT with `details.state` otherwise. Applied at the next start; UNSUPPORTED when the provider cannot enforce the policy.",
  errors: ["CONFLICT", "NOT_FOUND", "UNSUPPORTED"],
  input: z.strictObject({ computerId, network: networkPolicy }),
  output: computerView,
});
