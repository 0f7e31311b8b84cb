#!/bin/sh
# Assembles the run-time root filesystem shared by the three images, under $1, from the build
# base (Debian bookworm with Node.js at /usr/local/bin/node, dnsmasq-base and tini installed).
# Only what the pod runs is copied: node, dnsmasq, tini, sleep (the manifest's preStop hook),
# jemalloc (the kube-dns image preloads it: images/Dockerfile) and the shared libraries the
# dynamic loader resolves for them. No shell, no package manager, no
# compiler. Debian's package records and copyright files of what was copied go along, so image
# scanners still see (and can flag) the dnsmasq and glibc versions inside.
set -eu
out=$1
bins="/usr/local/bin/node /usr/sbin/dnsmasq /usr/bin/tini /usr/bin/sleep"
# libraries loaded by name (LD_PRELOAD), found where the build base's loader finds them: the
# multiarch directory, which the image's loader searches too
libs="libjemalloc.so.2"

mkdir -p "$out"
# Debian's merged /usr: the loader path compiled into every binary (/lib64/ld-linux-x86-64.so.2,
# /lib/ld-linux-aarch64.so.1) goes through these links.
mkdir -p "$out/usr/bin" "$out/usr/sbin" "$out/usr/lib" "$out/usr/local/bin" "$out/etc" "$out/tmp" \
  "$out/var/lib/dpkg/status.d" "$out/usr/share/doc" "$out/proc" "$out/sys" "$out/dev" "$out/run"
ln -s usr/bin "$out/bin"
ln -s usr/sbin "$out/sbin"
ln -s usr/lib "$out/lib"
[ -d /usr/lib64 ] && mkdir -p "$out/usr/lib64" && ln -s usr/lib64 "$out/lib64"
chmod 1777 "$out/tmp"

copy() { # copy a file (following links) to the same path under $out
  mkdir -p "$out$(dirname "$1")"
  cp -L "$1" "$out$1"
}
files=""
# an executable or a library, and every library ldd resolves for it
copy_with_libs() {
  if ldd "$1" | grep -q 'not found'; then
    echo "rootfs.sh: $1 needs libraries the build base lacks:" >&2
    ldd "$1" | grep 'not found' >&2
    exit 1
  fi
  # ldd prints "libx.so.N => /path (0x...)" and the loader itself as "/path (0x...)"
  for f in "$1" $(ldd "$1" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
    copy "$f"
    files="$files $f"
  done
}
for b in $bins; do
  [ -x "$b" ] || { echo "rootfs.sh: $b is missing from the build base" >&2; exit 1; }
  copy_with_libs "$b"
done
for l in $libs; do
  path=$(ldconfig -p | sed -n "s/^[[:space:]]*$l (.*) => \(\/.*\)$/\1/p" | head -n 1)
  [ -n "$path" ] || { echo "rootfs.sh: $l is missing from the build base" >&2; exit 1; }
  copy_with_libs "$path"
done

# The package records (for scanners) and copyright files (licences) of the Debian packages
# the copied files come from; node comes from the Node.js project (its LICENSE, when present).
pkgs=$(for f in $files; do
  # dpkg knows a file by the path its package ships (/bin/sleep, not /usr/bin/sleep)
  dpkg -S "$f" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null || dpkg -S "$(readlink -f "$f")" 2>/dev/null || true
done | sed 's/:.*//; s/, /\n/g' | sort -u)
for p in $pkgs; do
  dpkg-query -s "$p" >"$out/var/lib/dpkg/status.d/$p"
  doc=/usr/share/doc/${p%%:*}/copyright
  [ -f "$doc" ] && copy "$doc"
done
for l in /usr/local/share/doc/node/LICENSE /usr/local/LICENSE; do
  [ -f "$l" ] && { copy "$l"; break; }
done
cp /etc/os-release "$out/etc/os-release"

# The user of the manifest (uid/gid 1001), nobody/nogroup (its supplementalGroups and fsGroup).
cat >"$out/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
kube-dns:x:1001:1001:kube-dns:/nonexistent:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$out/etc/group" <<'EOF'
root:x:0:
kube-dns:x:1001:
nogroup:x:65534:
EOF
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$out/etc/nsswitch.conf"
# The nanny's default -stateDir, writable whoever runs the image, as an emptyDir is (mode 0777;
# podman gives a tmpfs mounted over an image directory that directory's mode): a pod spec without
# the manifest's emptyDir there (the original's, images swapped) would otherwise stop the nanny.
mkdir -p "$out/run/dnsmasq-nanny"
chmod 0777 "$out/run/dnsmasq-nanny"

# What went in, for the build log.
echo "rootfs: $(du -sh "$out" | cut -f1) from packages: $(echo $pkgs)"
