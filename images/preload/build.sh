#!/bin/sh
# Builds images/preload/bundle/drop-symbol-tables.so, preloaded into every process of the images
# (images/Dockerfile: LD_PRELOAD) and of the bench's pod (scripts/bench-procs.mjs: imageEnv).
# Part of `npm run build`. Needs a C compiler and libc's headers (Debian: gcc, libc6-dev).
set -eu
here=$(dirname "$0")
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || {
  echo "images/preload/build.sh: no C compiler ($CC): install gcc and libc6-dev (scripts/install.sh does, as root)" >&2
  exit 1
}
mkdir -p "$here/bundle"
# written under a temporary name and renamed: a process starting meanwhile never maps half a file
"$CC" -O2 -Wall -Wextra -Werror -shared -fPIC -o "$here/bundle/drop-symbol-tables.so.tmp" "$here/drop-symbol-tables.c"
mv "$here/bundle/drop-symbol-tables.so.tmp" "$here/bundle/drop-symbol-tables.so"
