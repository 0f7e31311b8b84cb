#!/usr/bin/env bash
# Installs what the project needs on a fresh machine: Debian packages (when missing, as root)
# and the npm packages, then builds.
# Usage: scripts/install.sh [--demo | --with-bench] [--list-packages]
#   (none)           what every test needs (scripts/test.sh)
#   --demo           only what the demo pod needs (scripts/demo.sh): dnsmasq, the compiler of the
#                    build's preload, dig for the lines it prints to try
#   --with-bench     every test's packages and the bench's (scripts/bench.sh)
#   --list-packages  print the profile's Debian packages, one per line with "present" or
#                    "missing", and stop: nothing is installed or built
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_loglevel=${npm_config_loglevel:-error} npm_config_fund=false npm_config_audit=false

profile=test list=
usage='usage: scripts/install.sh [--demo | --with-bench] [--list-packages]'
for arg in "$@"; do
  case "$arg" in
    --demo | --with-bench)
      [ "$profile" = test ] || { echo "install.sh: --demo and --with-bench are two profiles, give one ($usage)" >&2; exit 2; }
      profile=${arg#--}; [ "$profile" = with-bench ] && profile=bench ;;
    --list-packages) list=1 ;;
    *) echo "install.sh: unknown argument '$arg' ($usage)" >&2; exit 2 ;;
  esac
done

packages=() need=()
# want PACKAGE TEST...: the profile uses PACKAGE; it is missing when the test fails.
want() {
  local pkg=$1; shift
  packages+=("$pkg")
  if "$@"; then [ -z "$list" ] || printf '%s\tpresent\n' "$pkg"
  else need+=("$pkg"); [ -z "$list" ] || printf '%s\tmissing\n' "$pkg"; fi
}
# (bash's command -v also names a file on PATH that cannot be executed: check that it can)
has() { local p; p=$(command -v "$1" 2>/dev/null) && [ -x "$p" ]; }
either() { has "$1" || [ -x "$2" ]; }

# Every profile: the pod's cache, and the images' preload (images/preload/build.sh, part of the
# build): a C compiler and libc's headers.
want dnsmasq-base either dnsmasq /usr/sbin/dnsmasq
want gcc has cc
want libc6-dev test -f /usr/include/link.h
# dig: the zone transfer tests' client, and the demo's lines to try
want bind9-dnsutils has dig
if [ "$profile" != demo ]; then
  # promtool (rule tests) and prometheus (the dashboard test scrapes the demo pod)
  want prometheus eval 'has promtool && has prometheus'
  # zone transfer tests: BIND's named as a real secondary
  want bind9 either named /usr/sbin/named
fi
if [ "$profile" = bench ]; then
  want dnsperf has dnsperf
  # the kube-dns image's allocator, which the bench's kube-dns preloads as the image does
  # (read whole first: grep -q leaving early would fail the pipe under pipefail)
  libs=$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true)
  want libjemalloc2 eval '[[ $libs == *"libjemalloc.so.2 "* ]]'
fi
# The images (scripts/images.sh) and their end-to-end test: podman with runc (crun cannot run on
# a hybrid cgroup layout), buildah for its builds, mmdebstrap for the Debian base, uidmap,
# catatonit (podman's pod infra container) and the CNI plugins with iptables (published ports).
# Only as root: the test needs root and skips without.
if [ "$profile" != demo ] && [ "$(id -u)" = 0 ]; then
  want podman has podman
  want buildah has buildah
  want runc has runc
  want mmdebstrap has mmdebstrap
  want uidmap has newuidmap
  want catatonit either catatonit /usr/libexec/podman/catatonit
  # the network stack of the pod's published ports (podman 4.3 on bookworm: CNI), a recommend only
  want containernetworking-plugins eval '[ -x /usr/lib/cni/bridge ] || [ -x /usr/lib/cni/portmap ]'
  want iptables has iptables
  # the autopath glibc test: a network namespace with a veth pair (ip), getent (libc-bin, essential)
  want iproute2 has ip
fi
[ -z "$list" ] || exit 0

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && has apt-get; then
    echo "installing Debian packages: ${need[*]}" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "missing Debian packages: ${need[*]}" >&2
    echo "install them with: sudo apt-get install ${need[*]}   (or run this script as root)" >&2
    exit 1
  fi
fi

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("Node >= 20.19 is required, this is "+process.version); process.exit(1) }'
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund >/dev/null; else npm install --no-audit --no-fund >/dev/null; fi
# The type-aware lint has its own small tree (lint/package.json says why); the demo does not lint.
[ "$profile" = demo ] || (cd lint && npm ci --no-audit --no-fund >/dev/null)
npm run build --silent
