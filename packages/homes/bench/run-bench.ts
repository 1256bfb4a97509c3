/** `node packages/homes/bench/run-bench.ts`: the home-store bench rows, standalone. */
import { benchHomes } from "./homes.bench.ts";

await benchHomes((row) => process.stdout.write(`${JSON.stringify(row)}\n`));
