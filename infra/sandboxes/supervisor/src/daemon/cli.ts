#!/usr/bin/env node
/** From source: `node cli.ts <method> '<json>'` (the image runs the bundle, entry.ts). */
import { fileURLToPath } from "node:url";
import { runCommandPath } from "./command-path.ts";

await runCommandPath(process.argv.slice(2), fileURLToPath(new URL("./main.ts", import.meta.url)));
