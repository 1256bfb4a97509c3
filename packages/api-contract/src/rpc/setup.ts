import { z } from "zod";
import { defineContract } from "../define.ts";

const name = z.string().trim().min(1).max(100);

/** First-run setup: the first user, their space, a bot and an API token (shown once). */
export const setupBootstrap = defineContract({
  name: "setup/bootstrap",
  auth: "bootstrap",
  input: z.strictObject({
    userName: name.default("admin"),
    spaceName: name.default("My Space"),
    botName: name.default("Assistant"),
  }),
  output: z.strictObject({
    userId: z.string(),
    spaceId: z.string(),
    botId: z.string(),
    /** The space's Team Computer, created unprovisioned (CMP-1). */
    computerId: z.string(),
    tokenId: z.string(),
    token: z.string(),
  }),
});
