#!/usr/bin/env bash
# Instruction counts of the key workloads, doecs and its peers side by side:
# runs the iai-callgrind benches (bench/benches/instructions.rs) under
# valgrind's callgrind and writes a machine-readable summary,
# target/doecs-instructions.json: per workload and library the instruction
# count (callgrind's `Ir`) of one run of the measured operation.
#
# Usage (from anywhere in the repository):
#
#   bench/instructions.sh
#   bench/instructions.sh --nocapture      # further arguments go to iai-callgrind
#                                          # (`cargo bench -p doecs-bench --bench
#                                          # instructions -- --help` lists them)
#
# Needs:
#   - valgrind on PATH (`apt-get install valgrind`);
#   - iai-callgrind-runner of exactly the version of the iai-callgrind
#     dev-dependency (see bench/Cargo.toml), installed once with
#       cargo install iai-callgrind-runner --version 0.16.1
#     (or point IAI_CALLGRIND_RUNNER at such a binary);
#   - python3 (to write the summary).
#
# What it runs: `cargo bench -p doecs-bench --bench instructions --
# --save-summary=json "$@"`. iai-callgrind keeps each benchmark's callgrind
# output (and the previous run's, as *.old, for its +/- column) under
# target/iai/doecs-bench/instructions/<workload>/<function>.<library>/; the
# summary is built from the summary.json files this run wrote there. The
# whole suite (44 benchmarks) takes about half a minute of valgrind time
# after the build.
#
# Counts repeat exactly for the same binary run from the same checkout path
# (the environment the benchmark sees, and so its stack alignment, is part of
# the input); compare runs from one checkout, not across machines.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

want_version="$(awk '/^name = "iai-callgrind"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)"
want_version="${want_version:-0.16.1}"

if ! command -v valgrind >/dev/null 2>&1; then
    echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2
    exit 1
fi
if [[ -z "${IAI_CALLGRIND_RUNNER:-}" ]] && ! command -v iai-callgrind-runner >/dev/null 2>&1; then
    echo "instructions.sh: iai-callgrind-runner is not installed; run" >&2
    echo "    cargo install iai-callgrind-runner --version $want_version" >&2
    exit 1
fi
if [[ -z "${IAI_CALLGRIND_RUNNER:-}" ]]; then
    have_version="$(cargo install --list 2>/dev/null | awk '/^iai-callgrind-runner v/ { sub(/^v/, "", $2); sub(/:$/, "", $2); print $2 }')"
    if [[ -n "$have_version" && "$have_version" != "$want_version" ]]; then
        echo "instructions.sh: iai-callgrind-runner $have_version is installed, the benches use iai-callgrind $want_version; run" >&2
        echo "    cargo install iai-callgrind-runner --version $want_version" >&2
        exit 1
    fi
fi

target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export IAI_CALLGRIND_HOME="${IAI_CALLGRIND_HOME:-$target_dir/iai}"
results="$IAI_CALLGRIND_HOME/doecs-bench/instructions"
out="$target_dir/doecs-instructions.json"

mkdir -p "$IAI_CALLGRIND_HOME"
stamp="$(mktemp "$IAI_CALLGRIND_HOME/.instructions-run.XXXXXX")"
trap 'rm -f "$stamp"' EXIT

start=$(date +%s)
cargo bench -p doecs-bench --bench instructions -- --save-summary=json "$@"
end=$(date +%s)

python3 - "$results" "$stamp" "$out" "$want_version" <<'EOF'
import json
import os
import subprocess
import sys

results, stamp, out, iai_version = sys.argv[1:5]
since = os.path.getmtime(stamp)

# Report order: the workloads as in the bench file, the libraries as in
# doecs_bench::LIBRARIES with each one's variants after it.
WORKLOADS = ["simple_iter", "get_random", "add_remove", "churn", "simple_insert", "frag_iter", "schedule"]
# (library, prefix of its variants' names)
LIBRARIES = [
    ("doecs", "doecs_"),
    ("hecs", "hecs_"),
    ("bevy_ecs", "bevy_ecs_"),
    ("shipyard", "shipyard_"),
    ("flecs_ecs", "flecs_ecs_"),
    ("soa_baseline", "soa_"),
]


def library_key(name):
    for i, (lib, prefix) in enumerate(LIBRARIES):
        if name == lib or name.startswith(prefix):
            return (i, name != lib, name)
    return (len(LIBRARIES), False, name)


def workload_key(name):
    return (WORKLOADS.index(name) if name in WORKLOADS else len(WORKLOADS), name)


def new_and_old(metric):
    """(this run's value, the previous run's or None) of one summary metric."""
    values = metric["metrics"]
    if "Both" in values:
        new, old = values["Both"]
    elif "Left" in values:
        new, old = values["Left"], None
    else:
        return None, None
    unwrap = lambda v: None if v is None else next(iter(v.values()))
    return unwrap(new), unwrap(old)


rows = []
for root, _dirs, files in os.walk(results):
    if "summary.json" not in files:
        continue
    path = os.path.join(root, "summary.json")
    if os.path.getmtime(path) < since:
        continue  # left over from an earlier run that this one did not repeat
    with open(path) as f:
        summary = json.load(f)
    # module_path is instructions::<workload>::<function>; the bench id is the library.
    workload = summary["module_path"].split("::")[1]
    profile = next(p for p in summary["profiles"] if p["tool"] == "Callgrind")
    ir, ir_old = new_and_old(profile["summaries"]["total"]["summary"]["Callgrind"]["Ir"])
    rows.append(
        {
            "workload": workload,
            "library": summary["id"],
            "ir": ir,
            "ir_previous_run": ir_old,
            "function": summary["module_path"],
            "setup": summary["details"],
        }
    )

if not rows:
    sys.exit(f"instructions.sh: no summary.json written under {results} by this run")

rows.sort(key=lambda r: (workload_key(r["workload"]), library_key(r["library"])))
workloads = {}
for r in rows:
    workloads.setdefault(r["workload"], {})[r["library"]] = r["ir"]


def command_output(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


status = command_output("git", "status", "--porcelain")
report = {
    "metric": "Ir",
    "unit": "instructions (callgrind Ir) of one run of the measured operation",
    "iai_callgrind": iai_version,
    "valgrind": command_output("valgrind", "--version"),
    "rustc": command_output("rustc", "--version"),
    "git_commit": command_output("git", "rev-parse", "HEAD"),
    "git_dirty": None if status is None else bool(status),
    "workloads": workloads,
    "benchmarks": rows,
}
with open(out, "w") as f:
    json.dump(report, f, indent=2)
    f.write("\n")

# The same figures as a table: one row per library, one column per workload.
libraries = sorted({r["library"] for r in rows}, key=library_key)
names = sorted(workloads, key=workload_key)
width = max(len(l) for l in libraries)
cols = [max(len(w), 11) for w in names]
print()
print(" " * width + "  " + "  ".join(w.rjust(c) for w, c in zip(names, cols)))
for lib in libraries:
    cells = []
    for w, c in zip(names, cols):
        v = workloads[w].get(lib)
        cells.append(("-" if v is None else f"{v:,}").rjust(c))
    print(lib.ljust(width) + "  " + "  ".join(cells))
print(f"\nInstruction counts (Ir) written to {out}")
EOF
echo "cargo bench and valgrind took $((end - start)) s"
