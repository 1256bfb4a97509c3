#!/bin/sh
# Finishes the server base image's root (an mmdebstrap customize hook):
#   server-customize.sh <rootfs> <staging>   (<staging> holds `node` (Node 24) and `entrypoint.sh`)
# The application is the next layer (server.Dockerfile).
set -eu
root="$1"
staging="$2"
install -m 0755 "$staging/node" "$root/usr/local/bin/node"
install -m 0755 "$staging/entrypoint.sh" "$root/usr/local/bin/rakazo-entrypoint"
install -d -m 0755 "$root/app"
find "$root/usr/share/doc" -type f ! -name copyright -delete
