#!/usr/bin/env bash
# Installs the host tools the test suites launch, when missing, on a Debian/Ubuntu machine:
# Chromium at /usr/bin/chromium (playwright-core and the page-method tests launch it), and the
# desktop stack the host supervisor runs (Xvfb, x11vnc, xdotool) with a font for text pages,
# Debian's docker-compose (v1) and mmdebstrap for the compose suite (offline image builds), and
# libnss-wrapper for the PTY server's host test, gVisor's runsc for the Docker suites' second
# runtime, and nginx as the TLS proxy in front of the web
# service (its system service is not used: the test runs its own nginx on a loopback port).
# Idempotent and fast when everything is present (no apt call at all). Docker is installed by
# scripts/docker-engine.sh. Under CI=true a suite whose tool is still missing fails, naming it.
set -euo pipefail

# command or path → Debian package
declare -A NEEDED=(
  [/usr/bin/chromium]=chromium
  [Xvfb]=xvfb
  [x11vnc]=x11vnc
  [xdotool]=xdotool
  [/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf]=fonts-dejavu-core
  [docker-compose]=docker-compose
  [mmdebstrap]=mmdebstrap
  # The PTY server's host test names a passwd-less shell uid through nss_wrapper (TRM-5).
  [/usr/lib/x86_64-linux-gnu/libnss_wrapper.so]=libnss-wrapper
  # The web service behind a TLS reverse proxy, as docs/self-hosting.md sets it up, with a
  # certificate the test makes.
  [/usr/sbin/nginx]=nginx
  [openssl]=openssl
  # A real RFB 3.3 client: the gateway's view-only filter must serve it a picture.
  [vncsnapshot]=vncsnapshot
  # gVisor: the Docker suites run again under RAKAZO_DOCKER_RUNTIME=runsc (vitest.config.ts);
  # scripts/docker-engine.sh registers it with the engine.
  [runsc]=runsc
)

missing=()
for tool in "${!NEEDED[@]}"; do
  if [[ "$tool" == /* ]]; then [ -e "$tool" ] && continue; else command -v "$tool" >/dev/null 2>&1 && continue; fi
  missing+=("${NEEDED[$tool]}")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

# Without apt or root, a developer's run goes on (those suites skip, saying why); CI stops here.
cannot_install() {
  echo "test-tools: missing ${missing[*]}; $1" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 0
}
command -v apt-get >/dev/null 2>&1 || cannot_install "no apt-get here: install them by hand"
[ "$(id -u)" -eq 0 ] || cannot_install "installing needs root: sudo apt-get install ${missing[*]}"
echo "test-tools: installing ${missing[*]} from apt" >&2
export DEBIAN_FRONTEND=noninteractive
# Another apt on this machine (a parallel job) holds the lock for a while: wait, do not fail.
apt_opts=(-o DPkg::Lock::Timeout=600 -qq)
started=$SECONDS
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null
echo "test-tools: installed in $((SECONDS - started)) s" >&2
