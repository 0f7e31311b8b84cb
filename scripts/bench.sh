#!/usr/bin/env bash
# Benchmarks: throughput/latency with dnsperf and memory at 10k/50k/100k services.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --with-bench
exec node scripts/bench.mjs "$@"
