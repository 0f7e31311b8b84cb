#!/usr/bin/env bash
# Every test of the project, from a fresh machine: installs what is missing, builds, runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
node scripts/run-tests.mjs "$@"
