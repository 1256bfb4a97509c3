/** `./rakazo token create --user <name|id> [--name <label>]`: prints one new token on stdout. */
import type { RuntimeEnv } from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import { issueUserToken } from "@rakazo/services";
import { StartupError } from "../startup-error.ts";
import { withDatabase } from "./database.ts";

export async function tokenCommand(env: RuntimeEnv, log: Logger, args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  const user = option(rest, "--user");
  if (verb !== "create" || !user) {
    throw new StartupError("usage: ./rakazo token create --user <name|id> [--name <label>]");
  }
  const tokenName = option(rest, "--name") ?? "operator";
  const issued = await withDatabase(env, log, (db) => issueUserToken({ db }, { user, tokenName }));
  process.stderr.write(`rakazo: new API token ${issued.tokenId} for ${issued.userId} (shown once):\n`);
  process.stdout.write(`${issued.token}\n`);
  return 0;
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at >= 0) return args[at + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}
