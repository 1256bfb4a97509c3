#!/bin/sh
# Postgres from Debian's packages behind the official image's interface, so docker-compose.yml
# runs either (RAKAZO_POSTGRES_IMAGE=postgres:17 on a machine with a registry):
#   PGDATA, POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE.
# On an empty PGDATA: initdb with that user and password (scram-sha-256 over TCP, trust only on
# the container's own Unix socket), then the database. Starts as root only to own PGDATA and to
# read the password file (mode 0600, root's); Postgres itself runs as the postgres user.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
export PGDATA

if [ "${1:-}" != "postgres" ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    POSTGRES_PASSWORD="$(cat "$POSTGRES_PASSWORD_FILE")"
    export POSTGRES_PASSWORD
    unset POSTGRES_PASSWORD_FILE
  fi
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "docker-entrypoint: no POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE; refusing to create a cluster without one" >&2
    exit 1
  fi
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != "postgres" ]; then
    createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "docker-entrypoint: initialised $PGDATA" >&2
fi
unset POSTGRES_PASSWORD
exec "$@"
