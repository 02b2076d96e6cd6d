#!/bin/sh
# The full side-by-side run and its report (about 10-20 minutes on 2 cores,
# after a release build of the peers). Writes BENCHMARKS.md and
# bench/benchmarks.svg at the workspace root.
#
#   bench/run.sh                   # every workload
#   bench/run.sh --bench churn     # one workload (the report keeps the others'
#                                  # last estimates)
#
# Timing per benchmark: DOECS_BENCH_WARMUP_MS (default 1000) and
# DOECS_BENCH_MEASURE_MS (default 3000). Smoke mode (every body once, tiny
# sizes, no figures): DOECS_BENCH_SMOKE=1 cargo test --release -p doecs-bench --benches
set -eu
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then set -- --benches; fi
cargo bench -p doecs-bench "$@"
cargo run --release -p doecs-bench --bin report
