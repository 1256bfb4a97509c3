/**
 * Child process for the crash tests: checkpoints a home and is SIGKILLed midway by the parent.
 * argv: mode ("object" | "local-archive"), JSON options. Prints "started" once the
 * checkpoint is under way.
 */
import { writeFile } from "node:fs/promises";
import { packDirectory } from "@rakazo/sandbox";
import { LocalAgentHomeStore } from "../local-store.ts";
import { ObjectAgentHomeStore, type ObjectStorageConfig } from "../object-store.ts";

interface ChildOptions {
  dataDir: string;
  storage: ObjectStorageConfig;
  homeKey: string;
  previousRevision: number;
  dataKeyHex: string;
  commitFile: string;
  sourceDir?: string;
}

const [mode, json] = process.argv.slice(2);
const options = JSON.parse(json ?? "{}") as ChildOptions;
const commit = async (revision: number) => {
  await writeFile(options.commitFile, String(revision));
  return true;
};
const store =
  mode === "object"
    ? new ObjectAgentHomeStore({
        dataDir: options.dataDir,
        storage: options.storage,
        partSize: 5 * 1024 * 1024,
      })
    : new LocalAgentHomeStore({ dataDir: options.dataDir });
const archive = options.sourceDir ? packDirectory(options.sourceDir) : undefined;
setTimeout(() => process.stdout.write("started\n"), 200);
await store.checkpoint({
  homeKey: options.homeKey,
  dataKey: Buffer.from(options.dataKeyHex, "hex"),
  previousRevision: options.previousRevision,
  source: archive ? { kind: "archive", archive } : { kind: "local-dir" },
  commit,
});
process.stdout.write("finished\n");
