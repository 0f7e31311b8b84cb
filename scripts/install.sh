#!/usr/bin/env bash
# Installs what the project needs on a fresh machine: Debian packages (when missing, as root)
# and the npm packages, then builds. Usage: scripts/install.sh [--with-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_loglevel=${npm_config_loglevel:-error} npm_config_fund=false npm_config_audit=false

need=()
command -v dnsmasq >/dev/null 2>&1 || [ -x /usr/sbin/dnsmasq ] || need+=(dnsmasq-base)
# promtool (rule tests) and prometheus (the dashboard test scrapes the demo pod)
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
# zone transfer tests: BIND's named as a real secondary (bind9) and dig as the client (bind9-dnsutils)
[ -x /usr/sbin/named ] || command -v named >/dev/null 2>&1 || need+=(bind9)
command -v dig >/dev/null 2>&1 || need+=(bind9-dnsutils)
# the images' preload (images/preload/build.sh, part of the build): a C compiler and libc's headers
command -v cc >/dev/null 2>&1 && [ -f /usr/include/link.h ] || need+=(gcc libc6-dev)
if [ "${1:-}" = "--with-bench" ]; then
  command -v dnsperf >/dev/null 2>&1 || need+=(dnsperf)
  # the kube-dns image's allocator, which the bench's kube-dns preloads as the image does
  # (read whole first: grep -q leaving early would fail the pipe under pipefail)
  libs=$(ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true)
  [[ $libs == *"libjemalloc.so.2 "* ]] || need+=(libjemalloc2)
fi
# The images (scripts/images.sh) and their end-to-end test: podman with runc (crun cannot run on
# a hybrid cgroup layout), buildah for its builds, mmdebstrap for the Debian base, uidmap,
# catatonit (podman's pod infra container) and the CNI plugins with iptables (published ports).
# Only as root: the test needs root and skips without.
if [ "$(id -u)" = 0 ]; then
  command -v podman >/dev/null 2>&1 || need+=(podman)
  command -v buildah >/dev/null 2>&1 || need+=(buildah)
  command -v runc >/dev/null 2>&1 || need+=(runc)
  command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
  command -v newuidmap >/dev/null 2>&1 || need+=(uidmap)
  command -v catatonit >/dev/null 2>&1 || [ -x /usr/libexec/podman/catatonit ] || need+=(catatonit)
  # the network stack of the pod's published ports (podman 4.3 on bookworm: CNI), a recommend only
  [ -x /usr/lib/cni/bridge ] || [ -x /usr/lib/cni/portmap ] || need+=(containernetworking-plugins)
  command -v iptables >/dev/null 2>&1 || need+=(iptables)
  # the autopath glibc test: a network namespace with a veth pair (ip), getent (libc-bin, essential)
  command -v ip >/dev/null 2>&1 || need+=(iproute2)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
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
# The type-aware lint has its own small tree (lint/package.json says why).
(cd lint && npm ci --no-audit --no-fund >/dev/null)
npm run build --silent
