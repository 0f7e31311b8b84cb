#!/usr/bin/env bash
# Every test of the project, from a fresh machine: installs what is missing, builds, runs.
# Arguments go to scripts/run-tests.mjs: path substrings to pick files, --repeat N to run N times
# in a row and stop at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# Type-aware lint first (about 25 s): a floating or misused promise is an unhandled rejection, and
# an unhandled rejection is a crash of the DNS server in production.
echo "type-aware lint (typescript-eslint, lint/eslint.config.mjs)" >&2
npm run -s lint:types
node scripts/run-tests.mjs "$@"
