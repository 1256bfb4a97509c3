/**
 * The bundle's entry (supervisor.mjs, see bundle.ts): one file is both the daemon and its
 * command path. `node supervisor.mjs serve [flags]` runs the daemon; `node supervisor.mjs
 * <method> '<json>'` calls it, starting `node supervisor.mjs serve` when nothing listens.
 */
import { fileURLToPath } from "node:url";
import { runCommandPath } from "./command-path.ts";
import { runDaemon } from "./daemon.ts";

const argv = process.argv.slice(2);
if (argv[0] === "serve") await runDaemon(argv);
else await runCommandPath(argv, fileURLToPath(import.meta.url));
