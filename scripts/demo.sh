#!/usr/bin/env bash
# Runs the whole kube-dns pod locally on an embedded demo cluster (installs what is missing first).
# Usage: scripts/demo.sh [--dns-port=5353] [--auto-ports] [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --demo
exec node scripts/demo.mjs "$@"
