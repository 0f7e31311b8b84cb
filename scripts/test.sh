#!/usr/bin/env bash
# Every test of the project, from a fresh machine: installs what is missing, builds, runs.
# Arguments go to scripts/run-tests.mjs: path substrings to pick files, --repeat N to run N times
# in a row and stop at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
node scripts/run-tests.mjs "$@"
