/**
 * The workspace file script, run *inside* a computer as the workspace user, by the Docker
 * adapter (`docker exec`) and the remote runtime (the provider's command API) alike. Paths are
 * resolved in the machine with `realpath` and confined to the workspace, so a symlink the
 * computer planted is refused with INVALID_PATH instead of followed: the worst it reaches is
 * what the workspace user reaches anyway.
 *
 * `$1` = operation, `$2` = workspace-relative path ("" = the root), then per operation:
 * - `read <max bytes> [locate]`: the file on stdout, or with `locate` only its resolved path
 *   (for a caller that fetches the file through its own file API);
 * - `list`: NUL-separated `type\tsize\tmtime\tname` records (listing.ts parses them);
 * - `write [source]`: the content from stdin, or moved in from the file `source` (removed
 *   whatever happens); written beside the target and renamed over it;
 * - `export [target]`: a tar of the workspace, sorted, on stdout or into the file `target`;
 * - `import <tar>`: a tar the host already validated and repacked, extracted beside the
 *   workspace, then swapped in child by child, so a failure leaves the previous contents.
 * Exit codes are FILE_EXIT's (file-script-exits.ts); anything else is a provider error.
 */
import { FILE_EXIT } from "./file-script-exits.ts";
import { quote, quoteArgv } from "./remote/shell.ts";

/** The script for a computer whose workspace is `workspace` (an absolute path). */
function workspaceScript(workspace: string): string {
  return `
W=${quote(workspace)}
t="$W\${2:+/$2}"
inside() { case "$1" in "$W"|"$W"/*) return 0;; *) exit ${FILE_EXIT.outside};; esac; }
case "$1" in
read)
  p=$(realpath -e -- "$t" 2>/dev/null) || exit ${FILE_EXIT.notFound}
  inside "$p"
  [ -d "$p" ] && exit ${FILE_EXIT.isDirectory}
  [ -f "$p" ] || exit ${FILE_EXIT.notFile}
  # find, not stat: coreutils 9.1's statx(AT_NO_AUTOMOUNT) is EINVAL under gVisor 2022-12 (docs/security.md).
  size=$(find "$p" -maxdepth 0 -printf %s) || exit ${FILE_EXIT.notFound}
  [ "$size" -le "$3" ] || exit ${FILE_EXIT.tooLarge}
  if [ "$4" = locate ]; then printf '%s' "$p"; exit 0; fi
  exec cat -- "$p";;
list)
  p=$(realpath -e -- "$t" 2>/dev/null) || exit ${FILE_EXIT.notFound}
  inside "$p"
  [ -d "$p" ] || exit ${FILE_EXIT.notDirectory}
  cd -- "$p" && exec find . -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%T@\\t%P\\0';;
write)
  up="$3"
  fail() { [ -n "$up" ] && rm -f -- "$up"; exit "$1"; }
  p=$(realpath -m -- "$t") || fail ${FILE_EXIT.notFound}
  case "$p" in "$W"/*) ;; "$W") fail ${FILE_EXIT.isDirectory};; *) fail ${FILE_EXIT.outside};; esac
  [ -d "$p" ] && fail ${FILE_EXIT.isDirectory}
  d=$(dirname -- "$p")
  mkdir -p -- "$d" 2>/dev/null || fail ${FILE_EXIT.notDirectory}
  tmp="$d/.rakazo-write.$$"
  if cat -- "\${up:--}" >"$tmp" && mv -f -- "$tmp" "$p"; then fail 0; fi
  rm -f -- "$tmp"; fail 1;;
export)
  cd -- "$W" || exit 1
  out="$3"; st="\${out:-/tmp/.rakazo-export.$$}.failed"
  { find . -mindepth 1 \\( -type f -o -type d \\) -printf '%P\\0' || : >"$st"; } | LC_ALL=C sort -z |
    tar --null --no-recursion --numeric-owner --ignore-failed-read --warning=no-file-changed -T - -cf "\${out:--}"
  rc=$?
  if [ -e "$st" ]; then rm -f -- "$st"; [ -n "$out" ] && rm -f -- "$out"; exit 3; fi
  # 1 = a file changed while it was read: the archive is still well-formed.
  [ "$rc" -le 1 ] && exit 0
  [ -n "$out" ] && rm -f -- "$out"; exit "$rc";;
import)
  in="$3"
  s=$(mktemp -d "$(dirname -- "$W")/.rakazo-import.XXXXXX") || { rm -f -- "$in"; exit 1; }
  mkdir "$s/incoming" "$s/previous" && tar -xf "$in" -C "$s/incoming" --no-same-owner --same-permissions --delay-directory-restore 2>&1 \\
    || { rm -rf -- "$s" "$in"; exit 1; }
  rm -f -- "$in"
  find "$W" -mindepth 1 -maxdepth 1 -exec mv -- {} "$s/previous/" \\; &&
    find "$s/incoming" -mindepth 1 -maxdepth 1 -exec mv -- {} "$W/" \\;
  rc=$?
  rm -rf -- "$s"
  exit "$rc";;
esac
exit 2
`;
}

/** The argv that runs one operation of the script (`/bin/sh -c <script> rakazo-files …`). */
export function workspaceScriptArgv(workspace: string, op: string, args: readonly string[]): string[] {
  return ["/bin/sh", "-c", workspaceScript(workspace), "rakazo-files", op, ...args];
}

/** The same as one shell command line, for providers whose command API takes a string. */
export function workspaceScriptCommand(workspace: string, op: string, args: readonly string[]): string {
  return quoteArgv(workspaceScriptArgv(workspace, op, args));
}
