import { z } from "zod";
import { defineContract } from "../define.ts";

const name = z.string().trim().min(1).max(100);

export const setupBootstrap = defineContract({
  name: "setup/bootstrap",
  auth: "bootstrap",
  summary: "Create the first user",
  description:
    "First-run setup: the installation's first user, their space, a bot, the space's Team Computer (created unprovisioned) and an API token, shown once. Needs no API token: with BOOTSTRAP_TOKEN configured that token is the bearer; without one, a client on the server's machine, or anyone with the printed setup code (DATA_DIR/setup-code) as the bearer. Once a user exists it answers ALREADY_BOOTSTRAPPED (mint further tokens with `./rakazo token create`).",
  errors: ["ALREADY_BOOTSTRAPPED"],
  input: z.strictObject({
    userName: name.default("admin"),
    spaceName: name.default("My Space"),
    botName: name.default("Assistant"),
  }),
  output: z.strictObject({
    userId: z.string(),
    spaceId: z.string(),
    botId: z.string(),
    computerId: z.string().describe("The space's Team Computer, created unprovisioned."),
    tokenId: z.string(),
    token: z.string(),
  }),
});
