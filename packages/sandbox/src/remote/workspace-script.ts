/**
 * The workspace file script of remote computers: `$1` = operation, `$2` = workspace-relative
 * path ("" = root), `$3` = operation argument. Paths are resolved *inside* the machine with
 * `realpath` and confined to the workspace, as the Docker adapter does (workspace-files.ts), so a
 * symlink planted by the computer is refused with INVALID_PATH instead of followed out of it.
 */
import { FILE_EXIT } from "../file-script-exits.ts";
import { quote } from "./shell.ts";

function script(workspace: string): string {
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
  size=$(stat -c %s -- "$p") || exit ${FILE_EXIT.notFound}
  [ "$size" -le "$3" ] || exit ${FILE_EXIT.tooLarge}
  printf '%s' "$p"; exit 0;;
list)
  p=$(realpath -e -- "$t" 2>/dev/null) || exit ${FILE_EXIT.notFound}
  inside "$p"
  [ -d "$p" ] || exit ${FILE_EXIT.notDirectory}
  cd -- "$p" && exec find . -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%T@\\t%P\\0';;
write)
  up="$3"
  p=$(realpath -m -- "$t") || { rm -f -- "$up"; exit ${FILE_EXIT.notFound}; }
  case "$p" in "$W"/*) ;; *) rm -f -- "$up"; exit ${FILE_EXIT.outside};; esac
  [ -d "$p" ] && { rm -f -- "$up"; exit ${FILE_EXIT.isDirectory}; }
  d=$(dirname -- "$p")
  mkdir -p -- "$d" 2>/dev/null || { rm -f -- "$up"; exit ${FILE_EXIT.notDirectory}; }
  tmp="$d/.rakazo-write.$$"
  if cat -- "$up" >"$tmp" && mv -f -- "$tmp" "$p"; then rm -f -- "$up"; exit 0; fi
  rm -f -- "$tmp" "$up"; exit 1;;
export)
  cd -- "$W" || exit 1
  out="$3"; st="$out.failed"
  { find . -mindepth 1 \\( -type f -o -type d \\) -printf '%P\\0' || : >"$st"; } | LC_ALL=C sort -z |
    tar --null --no-recursion --numeric-owner --ignore-failed-read --warning=no-file-changed -T - -cf "$out"
  rc=$?
  if [ -e "$st" ]; then rm -f -- "$st" "$out"; exit 3; fi
  [ "$rc" -le 1 ] && exit 0
  rm -f -- "$out"; exit "$rc";;
import)
  # $3: a tar the host already validated and repacked (PER-6). Extract beside the workspace,
  # then swap children, so a failure leaves the previous contents in place.
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

export function fileCommand(workspace: string, op: string, rel: string, arg = ""): string {
  return `/bin/sh -c ${quote(script(workspace))} rakazo-files ${quote(op)} ${quote(rel)} ${quote(arg)}`;
}
