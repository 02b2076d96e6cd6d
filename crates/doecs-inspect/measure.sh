#!/usr/bin/env bash
# What serving the inspector costs the main job: runs the release `doecs run`
# on the bundled 13,000-entity level without the inspector, then with it
# while curl asks 10 requests a second (the page's own mix: summary,
# archetypes, systems history, entity details, roots, a query with values),
# alternating ROUNDS times, and prints each run's mean frame time and the
# inspector's own account of the time it spent answering.
#
#   crates/doecs-inspect/measure.sh [FRAMES] [ROUNDS]   # defaults: 6000 frames, 3 rounds
#
# The cost is (mean frame with the inspector + answer time per frame) over
# the mean frame without it. Runs on a shared machine vary by several
# percent from one to the next, so compare the medians of several rounds.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
frames="${1:-6000}"
rounds="${2:-3}"
bin="$root/target/release/doecs"
if [ ! -x "$bin" ]; then
    (cd "$root" && cargo build --release -p doecs-cli)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mix=(
    "/api/world" "/api/archetypes" "/api/systems?last=120" "/api/entity/0v0"
    "/api/roots?limit=200" "/api/query?with=spin&limit=50&values=true"
    "/api/entity/1000v0" "/api/systems?since=1" "/api/world" "/api/entity/1003v0"
)

mean_of() { sed -n 's/^frames [0-9]*: mean \([0-9.]*\) ms.*/\1/p' "$1"; }

for round in $(seq "$rounds"); do
    "$bin" run --frames "$frames" -q > "$work/plain.txt"
    plain=$(mean_of "$work/plain.txt")

    # Created first: the loop below may read it before doecs has started.
    : > "$work/inspected.txt"
    "$bin" run --frames "$frames" -q --inspect 127.0.0.1:0 > "$work/inspected.txt" &
    doecs=$!
    addr=""
    for _ in $(seq 600); do
        addr=$(sed -n 's|^inspector: http://\([0-9.:]*\)/.*|\1|p' "$work/inspected.txt")
        [ -n "$addr" ] && break
        sleep 0.05
    done
    [ -n "$addr" ] || { echo "doecs printed no inspector address" >&2; exit 1; }
    : > "$work/curl.cfg"
    for _ in $(seq 200); do
        for path in "${mix[@]}"; do
            printf 'url = "http://%s%s"\noutput = "/dev/null"\n' "$addr" "$path" >> "$work/curl.cfg"
        done
    done
    # --fail-early: curl stops by itself at the first refused connection,
    # once doecs has finished.
    curl -s --fail-early --rate 10/s -w '%{http_code}\n' --config "$work/curl.cfg" \
        > "$work/codes.txt" 2>/dev/null &
    client=$!
    wait "$doecs"
    wait "$client" 2>/dev/null || true
    inspected=$(mean_of "$work/inspected.txt")
    line=$(grep '^inspector: [0-9]' "$work/inspected.txt" || true)
    answered=$(grep -c '^200$' "$work/codes.txt" || true)
    others=$(grep -v '^200$' "$work/codes.txt" | grep -vc '^000$' || true)
    echo "round $round: without inspector mean frame $plain ms; with it $inspected ms" \
        "($answered answers with status 200, $others with another status)"
    echo "    $line"
done
