#!/usr/bin/env bash
# Makes a Docker engine answer on this machine. Idempotent: exits at once when `docker info`
# already works. Otherwise installs docker.io from Debian (no registry needed) when dockerd is
# missing, starts dockerd detached from the calling shell, and waits up to 60 s for it.
# Used by CI (.ci/run) on a fresh Debian machine and by developers. Needs root to install/start.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "docker-engine: installing docker.io from apt" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io >/dev/null
fi

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
