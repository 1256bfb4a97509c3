/** `node packages/homes/src/testing/run-bench.ts`: the home-store bench rows, standalone. */
import { benchHomes } from "../bench.ts";

await benchHomes((row) => process.stdout.write(`${JSON.stringify(row)}\n`));
