#!/bin/sh
# Finishes the Postgres image's root (an mmdebstrap customize hook): customize.sh <rootfs> <dir>
# Debian's postgresql package made a cluster of its own in /var/lib/postgresql/15/main; the
# entrypoint makes one in $PGDATA instead (the official image's layout), so that one goes.
set -eu
root="$1"
dir="$2"
rm -rf "$root/var/lib/postgresql/15" "$root/etc/postgresql/15"
install -d -o postgres -g postgres -m 0700 "$root/var/lib/postgresql/data"
install -d -o postgres -g postgres -m 2775 "$root/var/run/postgresql"
install -m 0755 "$dir/docker-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
find "$root/usr/share/doc" -type f ! -name copyright -delete
