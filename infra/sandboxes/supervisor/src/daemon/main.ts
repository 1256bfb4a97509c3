/** From source: `node main.ts serve [flags]` (the image runs the bundle, entry.ts). */
import { runDaemon } from "./daemon.ts";

await runDaemon(process.argv.slice(2));
