/**
 * `./rakazo owner` prints the server owner; `./rakazo owner transfer <name|id>` makes another
 * person the server owner (shown on every space's members page; the one who may release
 * interrupted operations, OPS-6). The shell on the server is the authority: no RPC does this.
 * Exit codes: 0 done, 1 refused (the code is printed), 2 usage.
 */
import type { RuntimeEnv } from "@rakazo/config";
import type { Logger } from "@rakazo/log";
import { serverOwnerView, transferServerOwner } from "@rakazo/services";
import { withDatabase } from "./database.ts";

const USAGE = "usage: ./rakazo owner | ./rakazo owner transfer <user name or id>";

export async function ownerCommand(env: RuntimeEnv, log: Logger, args: string[]): Promise<number> {
  const [verb, user, ...rest] = args;
  if (verb === undefined) {
    const owner = await withDatabase(env, log, (db) => serverOwnerView({ db }));
    process.stdout.write(owner ? `${owner.name} (${owner.userId})\n` : "no users yet\n");
    return 0;
  }
  if (verb !== "transfer" || !user || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const moved = await withDatabase(env, log, (db) => transferServerOwner({ db }, { user }));
  const from = moved.from ? `${moved.from.name} (${moved.from.userId})` : "nobody";
  process.stdout.write(`server owner: ${moved.to.name} (${moved.to.userId}), was ${from}\n`);
  return 0;
}
