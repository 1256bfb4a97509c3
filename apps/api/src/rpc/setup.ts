import { bootstrapFirstUser } from "@rakazo/services";
import { z } from "zod";
import { defineRpc } from "./define.ts";

const name = z.string().trim().min(1).max(100);

/** First-run setup: the first user, their space, a bot and an API token (shown once). */
export const setupBootstrap = defineRpc({
  name: "setup/bootstrap",
  auth: "bootstrap",
  input: z.strictObject({
    userName: name.default("admin"),
    spaceName: name.default("My Space"),
    botName: name.default("Assistant"),
  }),
  handler: (ctx, _caller, input) => bootstrapFirstUser(ctx, input),
});
