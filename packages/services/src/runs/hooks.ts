import { checkpointAfterRuns } from "../homes/after-runs.ts";
import { screenRunHooks } from "../screens/revoke.ts";
import type { RunHooks } from "./runs.ts";

/**
 * What every app runs when a run ends: revoke the run's control capabilities while keeping
 * the screen (CMP-6), then queue the workspace checkpoint (PER-2).
 */
export const systemRunHooks: Required<RunHooks> = {
  async onRunFinished(ctx, run, computer) {
    await screenRunHooks.onRunFinished(ctx, run, computer);
    await checkpointAfterRuns.onRunFinished?.(ctx, run, computer);
  },
};
