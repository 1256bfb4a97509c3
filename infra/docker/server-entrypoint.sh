#!/bin/sh
# The server image's entrypoint (both build paths: build-images.sh and app.Dockerfile). Secrets
# live in volumes the compose `secrets` service fills once (apps/launcher/src/compose-secrets.ts),
# never in the image or the compose file: each one found under RAKAZO_SECRETS_DIR becomes its
# variable unless that variable is already set. A service sees only the volumes it mounts.
#   postgres/password              → DATABASE_URL (postgres://POSTGRES_USER:…@POSTGRES_HOST/POSTGRES_DB)
#   web/screen-service-token       → SCREEN_SERVICE_TOKEN
#   core/screen-capability-keys    → SCREEN_CAPABILITY_KEYS
#   core/master-key                → RAKAZO_MASTER_KEY
#   core/bootstrap-token           → BOOTSTRAP_TOKEN
#   s3/access-key-id, s3/secret-access-key → OBJECT_STORAGE_ACCESS_KEY_ID/_SECRET_ACCESS_KEY,
#                                    only when OBJECT_STORAGE_ENDPOINT is the bundled store's
#                                    (http://s3:9000); another store's keys come from you.
#   provider/<VARIABLE>            → E2B_API_KEY, NOVITA_API_KEY, DAYTONA_API_KEY, BOAT_API_KEY,
#                                    OPENROUTER_API_KEY, EXTERNAL_COMPUTER_TOKEN: keys you bring,
#                                    put there by you (self-hosting.md), when `.env` has none
# A variable the compose file passes blank (`${X:-}`) counts as unset here and to the processes.
set -eu
dir="${RAKAZO_SECRETS_DIR:-/run/rakazo-secrets}"

load() { # <variable> <file>
  eval "current=\${$1:-}"
  if [ -z "$current" ] && [ -r "$dir/$2" ]; then
    value="$(cat "$dir/$2")"
    export "$1=$value"
  fi
}

if [ -z "${DATABASE_URL:-}" ] && [ -r "$dir/postgres/password" ] && [ -n "${POSTGRES_HOST:-}" ]; then
  DATABASE_URL="postgres://${POSTGRES_USER:-rakazo}:$(cat "$dir/postgres/password")@${POSTGRES_HOST}:${POSTGRES_PORT:-5432}/${POSTGRES_DB:-rakazo}"
  export DATABASE_URL
fi
load SCREEN_SERVICE_TOKEN web/screen-service-token
load SCREEN_CAPABILITY_KEYS core/screen-capability-keys
load RAKAZO_MASTER_KEY core/master-key
load BOOTSTRAP_TOKEN core/bootstrap-token
if [ "${OBJECT_STORAGE_ENDPOINT:-}" = "http://s3:9000" ]; then
  load OBJECT_STORAGE_ACCESS_KEY_ID s3/access-key-id
  load OBJECT_STORAGE_SECRET_ACCESS_KEY s3/secret-access-key
fi
for variable in E2B_API_KEY NOVITA_API_KEY DAYTONA_API_KEY BOAT_API_KEY OPENROUTER_API_KEY EXTERNAL_COMPUTER_TOKEN; do
  load "$variable" "provider/$variable"
done
exec "$@"
