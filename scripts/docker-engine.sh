#!/usr/bin/env bash
# Makes a Docker engine answer on this machine. Idempotent: exits at once when `docker info`
# already works. Otherwise installs docker.io from Debian (no registry needed) when dockerd is
# missing, starts dockerd detached from the calling shell, and waits up to 60 s for it.
# Used by CI (.ci/run) on a fresh Debian machine and by developers. Needs root to install/start.
#
# When gVisor's `runsc` is installed (scripts/test-tools.sh installs it), the engine gets it as
# the runtime `runsc` (RAKAZO_DOCKER_RUNTIME=runsc) with the flags docs/security.md explains,
# through /etc/docker/daemon.json. A running dockerd only reloads that file (SIGHUP: running
# containers are untouched), and only when the entry changed or the engine does not list it.
set -euo pipefail

DAEMON_JSON=/etc/docker/daemon.json
# docs/security.md ("gVisor"): no sandbox network (computers have none; the egress proxy runs
# under runc), host Unix sockets in bind mounts (the supervisor's, the egress proxy's).
RUNSC_ARGS=(--network=none --host-uds=all)

# Writes the runsc entry; prints "changed" when daemon.json differs from before.
register_runsc() {
  command -v runsc >/dev/null 2>&1 || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker-engine: runsc is installed but registering it needs root (runsc install -- ${RUNSC_ARGS[*]})" >&2
    return 0
  fi
  mkdir -p "$(dirname "$DAEMON_JSON")"
  local before
  before=$(cat "$DAEMON_JSON" 2>/dev/null || true)
  # runsc's own installer merges its entry into the file and keeps every other setting.
  runsc install --config_file="$DAEMON_JSON" --runtime=runsc -- "${RUNSC_ARGS[@]}" 2>/dev/null
  [ "$before" = "$(cat "$DAEMON_JSON")" ] || echo changed
}

engine_has_runsc() {
  docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'
}

if docker info >/dev/null 2>&1; then
  changed=$(register_runsc)
  if command -v runsc >/dev/null 2>&1 && { [ -n "$changed" ] || ! engine_has_runsc; } && [ -s /var/run/docker.pid ]; then
    echo "docker-engine: reloading dockerd's configuration for runsc (SIGHUP)" >&2
    kill -HUP "$(cat /var/run/docker.pid)"
    for _ in $(seq 1 20); do engine_has_runsc && break; sleep 0.5; done
    engine_has_runsc || echo "docker-engine: dockerd did not pick up runsc; see /var/log/dockerd.log" >&2
  fi
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "docker-engine: installing docker.io from apt" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io >/dev/null
fi

register_runsc >/dev/null

if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "docker-engine: starting dockerd (log: /var/log/dockerd.log)" >&2
  # setsid + nohup: the daemon must outlive the shell (and CI step) that started it.
  setsid nohup dockerd >/var/log/dockerd.log 2>&1 </dev/null &
fi

for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "docker-engine: ready" >&2
    exit 0
  fi
  sleep 1
done

echo "docker-engine: dockerd did not answer within 60 s; tail of /var/log/dockerd.log:" >&2
tail -n 30 /var/log/dockerd.log >&2 || true
exit 1
