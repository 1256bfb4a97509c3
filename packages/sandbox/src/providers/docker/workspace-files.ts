/**
 * Workspace files of a Docker computer.
 *
 * list/read/write/export run *inside* the container, as the workspace user, through the shared
 * workspace script (../../workspace-script.ts, one `docker exec` per call, no tar round trip for
 * small files). Resolving paths in
 * the container means a symlink planted by a process in the computer can never make this host
 * process (root) read or write a host file: the worst it reaches is what uid 1000 in the
 * container can reach anyway. Paths are confined to the workspace with `realpath`; a path whose
 * resolution leaves it is refused with INVALID_PATH.
 *
 * import is done on the host, where the bind-mounted home lives: the archive is validated and
 * extracted into a staging directory beside the homes, which the container cannot see
 * (`extractArchive`, PER-6), then the home's children are swapped. The home directory itself is
 * the bind-mount source and must not be renamed.
 */
import { randomBytes } from "node:crypto";
import { lchown, lstat, mkdir, readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { extractArchive } from "../../archive.ts";
import { SandboxError } from "../../errors.ts";
import { fileFailure } from "../../file-script-exits.ts";
import { parseListing } from "../../listing.ts";
import { normalizeWorkspacePath } from "../../paths.ts";
import type { SandboxFiles } from "../../provider.ts";
import { workspaceScriptArgv } from "../../workspace-script.ts";
import { WORKSPACE_DIR, WORKSPACE_GID, WORKSPACE_UID } from "./container-spec.ts";
import { mapDockerError, runExec, startExecStream } from "./docker-exec.ts";

function fileScript(op: string, rel: string, ...args: string[]): string[] {
  return workspaceScriptArgv(WORKSPACE_DIR, op, [rel, ...args]);
}

export function createWorkspaceFiles(docker: Docker, ref: string): SandboxFiles {
  const run = async (op: string, rel: string, arg?: string, stdin?: string | Uint8Array) => {
    const result = await runExec(docker, ref, {
      argv: arg === undefined ? fileScript(op, rel) : fileScript(op, rel, arg),
      cwd: "/",
      ...(stdin !== undefined ? { stdin } : {}),
    });
    if (result.exitCode !== 0) throw fileFailure(result.exitCode, op, rel, result.stderr.toString());
    return result.stdout;
  };

  return {
    async list(path) {
      const rel = normalizeWorkspacePath(path);
      return parseListing(await run("list", rel), rel);
    },

    async read(path, options) {
      const rel = normalizeWorkspacePath(path);
      if (rel === "") throw new SandboxError("INVALID_PATH", "the workspace root is a directory");
      const max = options?.maxBytes ?? Number.MAX_SAFE_INTEGER;
      return new Uint8Array(await run("read", rel, String(Math.max(0, Math.floor(max)))));
    },

    async write(path, data) {
      const rel = normalizeWorkspacePath(path);
      if (rel === "") throw new SandboxError("INVALID_PATH", "cannot write the workspace root");
      await run("write", rel, "", data);
    },

    exportWorkspace(): Promise<Readable> {
      return startExecStream(docker, ref, { argv: fileScript("export", ""), cwd: "/" }, (code, stderr) =>
        fileFailure(code, "export", "", stderr),
      );
    },

    async importWorkspace(tar) {
      const homeDir = await hostHomeDir(docker, ref);
      // Beside the homes (same filesystem, so renames are cheap) but not inside any mounted
      // directory: nothing in a computer can touch the staging tree while it is built as root.
      const staging = join(dirname(homeDir), `.import-${randomBytes(6).toString("hex")}`);
      await mkdir(staging, { mode: 0o700 });
      try {
        const incoming = join(staging, "workspace");
        await extractArchive(tar, incoming);
        await chownTree(incoming, WORKSPACE_UID, WORKSPACE_GID);
        const previous = join(staging, "previous");
        await mkdir(previous);
        for (const name of await readdir(homeDir)) await rename(join(homeDir, name), join(previous, name));
        for (const name of await readdir(incoming)) await rename(join(incoming, name), join(homeDir, name));
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    },
  };
}

/** The host directory bind-mounted as the workspace, from the container's own record. */
async function hostHomeDir(docker: Docker, ref: string): Promise<string> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await docker.getContainer(ref).inspect();
  } catch (error) {
    throw mapDockerError(error, ref);
  }
  const mount = info.Mounts.find((m) => m.Destination === WORKSPACE_DIR && m.Type === "bind");
  if (!mount)
    throw new SandboxError("SANDBOX_PROVIDER_ERROR", `container ${ref} has no workspace bind mount`);
  return mount.Source;
}

/** lchown, never following links (the tree was just extracted: directories and regular files). */
async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  await lchown(path, uid, gid);
  const info = await lstat(path);
  if (!info.isDirectory()) return;
  for (const name of await readdir(path)) await chownTree(join(path, name), uid, gid);
}
