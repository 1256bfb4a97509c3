#!/usr/bin/env bash
# Builds every image docker-compose.yml uses, without a container registry:
#   rakazo-server:<hash>    API, worker, web and the secrets init (one image, the command picks)
#   rakazo-postgres:<hash>  Postgres from Debian's packages, speaking the official image's interface
#   rakazo-computer:<hash>  the computer image (infra/sandboxes/image/build.sh)
# Each is a bookworm root made by mmdebstrap through the host's own apt setup and turned into an
# image by `docker import`, like the computer image; Node 24 is the toolchain's (from the npm
# registry). Each tag's hash covers exactly what goes into that image (its staged files, package
# list and image settings), so an unchanged tree reuses its images and the build costs seconds;
# the server's Debian root is a separate base layer, so a code change rebuilds only the app layer. Every image is also tagged :latest, the
# names docker-compose.yml uses by default.
#
#   infra/docker/build-images.sh               builds (or reuses) all three; prints NAME=tag lines
#   infra/docker/build-images.sh --print-tags  prints the NAME=tag lines, builds nothing
#
# Needs root and docker (scripts/docker-engine.sh); brings the rest: mmdebstrap (apt, when
# missing), Node 24 and pnpm 11 (scripts/toolchain.sh), the repository's dependencies (`pnpm
# install` when node_modules is missing); the server image's node_modules come from that store.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=../../scripts/toolchain.sh
source "$repo/scripts/toolchain.sh" >&2

print_only=0
[ "${1:-}" = "--print-tags" ] && print_only=1

# The supervisor bundle (computer image) needs the repository's dependencies: a fresh clone
# installs them from the npm registry first.
if [ ! -d "$repo/node_modules" ]; then
  (cd "$repo" && pnpm install --frozen-lockfile) >&2
fi

work="$(mktemp -d /tmp/rakazo-images.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# What the server image receives of the repository: the workspace's manifests and the sources
# of apps/, packages/ and infra/sandboxes/ that git knows (tracked or new, not ignored), without
# tests. node_modules are installed from the lockfile below. Nothing else, so editing docs,
# tests or tool configuration does not change the image.
stage_sources() {
  local dest="$1"
  mkdir -p "$dest"
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard) |
    grep -zE '^(package\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml|\.npmrc|(apps|packages|infra/sandboxes)/.*)$' |
    grep -zvE '\.test\.ts$|/README\.md$' |
    (cd "$repo" && xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh) |
    (cd "$repo" && tar --null -T - -cf -) | tar -xf - -C "$dest"
}

# The hash of a staged directory: every file's name and bytes (the recipe, the scripts, Node).
hash_of() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16; }

ensure_mmdebstrap() {
  command -v mmdebstrap >/dev/null 2>&1 && return 0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
}

# A bookworm minbase root with <packages>, finished by <hook>, imported as <tag> with <changes>.
import_root() { # <tag> <packages,comma> <customize-hook> <docker import --change ...>...
  local tag="$1" packages="$2" hook="$3"
  shift 3
  local sources="/etc/apt/sources.list.d/debian.sources"
  [ -f "$sources" ] || sources="/etc/apt/sources.list"
  local aptopts=() f
  for f in /etc/apt/apt.conf.d/*; do aptopts+=("--aptopt=$f"); done
  local rootfs="$work/${tag//[:\/]/-}.tar" start=$SECONDS
  echo "build-images: building $tag (mmdebstrap)" >&2
  mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
    --include="$packages" "${aptopts[@]}" \
    --customize-hook='rm -f "$1/etc/apt/apt.conf.d/99mmdebstrap"' \
    --customize-hook="$hook" \
    --customize-hook='rm -rf "$1/usr/share/man/"* "$1/var/lib/apt/lists/"* "$1/var/cache/apt/"*.bin' \
    bookworm "$rootfs" "$sources"
  docker import "$@" --message "rakazo image $tag" "$rootfs" "$tag" >/dev/null
  rm -f "$rootfs"
  echo "build-images: built $tag in $((SECONDS - start)) s" >&2
}

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# The web app built from a staging copy of the sources with every dependency (Vite is a dev
# dependency, which the image does not get), out of the local pnpm store; its output goes to
# <dest>. Fails the image build when the web app does not build or has no index.html.
build_web() { # <store> <dest>
  local store="$1" dest="$2" staged="$work/web-build" start=$SECONDS
  stage_sources "$staged"
  (cd "$staged" && CI=true pnpm install --frozen-lockfile --prefer-offline --store-dir="$store" \
    --filter '@rakazo/web...' --reporter=silent) >&2
  (cd "$staged" && pnpm --filter @rakazo/web build) >&2
  [ -f "$staged/apps/web/dist/index.html" ] || {
    echo "build-images: the web app's build has no index.html" >&2
    return 1
  }
  rm -rf "$dest"
  cp -r "$staged/apps/web/dist" "$dest"
  rm -rf "$staged"
  echo "build-images: built the web app in $((SECONDS - start)) s" >&2
}

# --- rakazo-server ---------------------------------------------------------------------------
# Two layers: a base (Debian root + Node 24 + entrypoint; mmdebstrap, slow, changes rarely) and
# the application on top of it (`docker build` FROM that local base: no registry is asked, and a
# code change costs seconds, not a new root).
base_src="$work/server-base"
mkdir -p "$base_src"
cp "$here/server-entrypoint.sh" "$base_src/entrypoint.sh"
cp "$(command -v node)" "$base_src/node"
server_base_packages="ca-certificates,tini"
server_base_changes=(
  --change 'WORKDIR /app'
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin'
  --change 'ENV NODE_ENV=production'
  --change 'ENV LANG=C.UTF-8'
  --change 'ENTRYPOINT ["/usr/bin/tini","--","/usr/local/bin/rakazo-entrypoint"]'
  --change 'CMD ["node","apps/api/src/main.ts"]'
)
printf '%s\n' "$server_base_packages" "${server_base_changes[@]}" >"$base_src/recipe"
cp "$here/server-customize.sh" "$base_src/customize.sh"
base_tag="rakazo-server-base:$(hash_of "$base_src")"
server_src="$work/server-src"
stage_sources "$server_src/app"
# The supervisor bundle the cloud providers install into every machine (CMP-8): API and worker
# read it at RAKAZO_REMOTE_SUPERVISOR (docker-compose.yml). Bundled here, where the dev
# dependencies are: the image gets production dependencies only, and esbuild is not one.
bash "$repo/infra/sandboxes/image/build.sh" --stage-supervisor "$server_src/app/infra/sandboxes/supervisor/dist"
cp "$here/server.Dockerfile" "$server_src/Dockerfile"
echo "$base_tag" >"$server_src/base"
# The web app's production build (apps/web/dist) is made from these staged sources when the
# image is built (build_web), never copied from this tree's dist/: the tag's hash covers the
# sources and the build step itself (its text), so a change to either makes a new image.
declare -f build_web >"$server_src/web-recipe"
server_tag="rakazo-server:$(hash_of "$server_src")"

# --- rakazo-postgres ---------------------------------------------------------------------------
postgres_packages="postgresql-15,tini"
postgres_changes=(
  --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin'
  --change 'ENV PGDATA=/var/lib/postgresql/data'
  --change 'ENV LANG=C.UTF-8'
  --change 'VOLUME /var/lib/postgresql/data'
  --change 'EXPOSE 5432'
  --change 'ENTRYPOINT ["/usr/bin/tini","--","/usr/local/bin/docker-entrypoint.sh"]'
  --change 'CMD ["postgres"]'
)
postgres_src="$work/postgres"
cp -r "$here/postgres" "$postgres_src"
printf '%s\n' "$postgres_packages" "${postgres_changes[@]}" >"$postgres_src/recipe"
postgres_tag="rakazo-postgres:$(hash_of "$postgres_src")"

if [ "$print_only" = 1 ]; then
  echo "RAKAZO_SERVER_IMAGE=$server_tag"
  echo "RAKAZO_POSTGRES_IMAGE=$postgres_tag"
  echo "RAKAZO_COMPUTER_IMAGE=$(bash "$repo/infra/sandboxes/image/build.sh" --print-tag)"
  exit 0
fi

if have_image "$base_tag"; then
  echo "build-images: $base_tag already exists; skipping" >&2
else
  ensure_mmdebstrap
  import_root "$base_tag" "$server_base_packages" \
    "\"$base_src/customize.sh\" \"\$1\" \"$base_src\"" "${server_base_changes[@]}"
fi

if have_image "$server_tag"; then
  echo "build-images: $server_tag already exists; skipping" >&2
else
  start=$SECONDS
  # Production dependencies only, from the lockfile, out of the local pnpm store (the npm
  # registry only for what the store lacks).
  store="$(cd "$repo" && pnpm store path)"
  build_web "$store" "$server_src/app/apps/web/dist"
  (cd "$server_src/app" && CI=true pnpm install --prod --frozen-lockfile --prefer-offline \
    --store-dir="$store" --config.package-import-method=copy --reporter=silent) >&2
  DOCKER_BUILDKIT=0 docker build --quiet --build-arg "BASE=$base_tag" --label "rakazo.image=server" \
    -t "$server_tag" "$server_src" >/dev/null
  echo "build-images: built $server_tag in $((SECONDS - start)) s" >&2
fi
docker tag "$server_tag" rakazo-server:latest

if have_image "$postgres_tag"; then
  echo "build-images: $postgres_tag already exists; skipping" >&2
else
  ensure_mmdebstrap
  import_root "$postgres_tag" "$postgres_packages" \
    "\"$postgres_src/customize.sh\" \"\$1\" \"$postgres_src\"" "${postgres_changes[@]}"
fi
docker tag "$postgres_tag" rakazo-postgres:latest

computer_tag="$(bash "$repo/infra/sandboxes/image/build.sh")"

echo "RAKAZO_SERVER_IMAGE=$server_tag"
echo "RAKAZO_POSTGRES_IMAGE=$postgres_tag"
echo "RAKAZO_COMPUTER_IMAGE=$computer_tag"
