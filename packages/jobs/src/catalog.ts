/**
 * Every background job, declared once: its payload schema and retry policy. Fields added to a
 * payload later must be optional — jobs already queued still carry the old shape.
 */
import { z } from "zod";

const computerJob = z.object({ computerId: z.string(), operationId: z.string() });
const checkpointJob = computerJob.extend({ reason: z.string().optional() });

export const JOB_CATALOG = {
  "computer.provision": { schema: computerJob, retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 900 },
  "computer.stop": { schema: computerJob, retryLimit: 2, retryDelaySeconds: 5, expireInSeconds: 600 },
  "computer.delete": { schema: computerJob, retryLimit: 5, retryDelaySeconds: 10, expireInSeconds: 600 },
  // OPS-1/OPS-4: never retried by the queue; a failed or interrupted one is recovered explicitly.
  "computer.update": { schema: computerJob, retryLimit: 0, retryDelaySeconds: 0, expireInSeconds: 3_600 },
  "computer.recover": { schema: computerJob, retryLimit: 0, retryDelaySeconds: 0, expireInSeconds: 3_600 },
  // Never retried: an agent run is not replayed by the runtime (BRW-5); a failed one ends failed.
  "agent.run": {
    schema: z.object({
      runId: z.string(),
      computerId: z.string(),
      botId: z.string(),
      userId: z.string(),
      fencingToken: z.number().int(),
      task: z.string(),
    }),
    retryLimit: 0,
    retryDelaySeconds: 0,
    expireInSeconds: 4 * 3_600,
  },
  "computer.checkpoint": {
    schema: checkpointJob,
    retryLimit: 3,
    retryDelaySeconds: 10,
    expireInSeconds: 3_600,
  },
} as const satisfies Record<
  string,
  { schema: z.ZodType; retryLimit: number; retryDelaySeconds: number; expireInSeconds: number }
>;

export type JobName = keyof typeof JOB_CATALOG;
export type JobPayload<N extends JobName> = z.infer<(typeof JOB_CATALOG)[N]["schema"]>;
export const JOB_NAMES = Object.keys(JOB_CATALOG) as JobName[];
