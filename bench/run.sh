#!/bin/sh
# The full side-by-side run and its report (about 20-30 minutes on 2 cores,
# after a release build of the peers). Writes BENCHMARKS.md, bench/benchmarks.svg
# and bench/scaling.svg at the workspace root.
#
#   bench/run.sh                   # every workload, the memory table, and the
#                                  # instruction counts when valgrind and
#                                  # iai-callgrind-runner are installed
#   bench/run.sh --bench churn     # one workload (the report keeps the others'
#                                  # last estimates)
#
# Timing per benchmark: DOECS_BENCH_WARMUP_MS (default 1000) and
# DOECS_BENCH_MEASURE_MS (default 3000). Smoke mode (every body once, tiny
# sizes, no figures): DOECS_BENCH_SMOKE=1 cargo test --release -p doecs-bench --benches
set -eu
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
# The criterion benches (the instruction counts have their own script).
benches="simple_insert simple_iter iter_scale frag_iter heavy_compute schedule add_remove churn get_random level_spawn transform_propagate lazy_gc"
if [ "$#" -eq 0 ]; then
    for b in $benches; do
        cargo bench -p doecs-bench --bench "$b"
    done
    cargo run --release -p doecs-bench --bin memory -- --json "$target/doecs-memory.json"
    if [ -x bench/instructions.sh ] && command -v valgrind >/dev/null 2>&1 \
        && command -v iai-callgrind-runner >/dev/null 2>&1; then
        bench/instructions.sh
    else
        echo "instruction counts skipped (needs valgrind and iai-callgrind-runner)"
    fi
else
    cargo bench -p doecs-bench "$@"
fi
cargo run --release -p doecs-bench --bin report
