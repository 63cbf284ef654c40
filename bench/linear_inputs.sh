#!/usr/bin/env bash
# Benchmark: inputs built to find work that grows faster than the input —
#  - scan of one expression of N NumPy calls (`x = np.abs(1) + np.abs(1) + ...`,
#    every call a finding on one line), N = 20,000 and 200,000;
#  - verify of two CSV tables of K columns (3 rows, Python's csv module),
#    K = 10,000 and 100,000.
# For each: the wall time at both sizes (median of RUNS runs, GNU time) and
# their ratio. Linear work gives a ratio near the size ratio (10); quadratic
# work near 100. Given a second binary (an older gpuopt), it is measured the
# same way alongside (its large sizes are skipped past LIMIT seconds, 60).
#
# Usage: bench/linear_inputs.sh [GPUOPT_BINARY [OTHER_BINARY]]
# Needs: /usr/bin/python3, GNU time (/usr/bin/time). RUNS=N (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/gpuopt}
other=${2:-}
runs=${RUNS:-3}
limit=${LIMIT:-60}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

/usr/bin/python3 - "$dir" <<'PY'
import csv, sys
d = sys.argv[1]
for n in (20_000, 200_000):
    with open(f"{d}/calls{n}.py", "w") as f:
        f.write("import numpy as np\nx = " + " + ".join(["np.abs(1)"] * n) + "\n")
for k in (10_000, 100_000):
    for side in ("ref", "cand"):
        with open(f"{d}/{side}{k}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow([f"c{i}" for i in range(k)])
            for r in range(3):
                w.writerow([i * r for i in range(k)])
PY
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"

# median BIN ARGS...: the median wall time of $runs runs in $secs (a run past
# $limit s is stopped, and its time is reported as "> limit").
median() {
  local t=() rc
  for ((i = 0; i < runs; i++)); do
    rc=0
    timeout "$limit" /usr/bin/time -f "%e" -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || rc=$?
    if [ "$rc" -eq 124 ]; then secs="> $limit"; return; fi
    [ "$rc" -le 1 ] || { echo "exit $rc: $*"; tail -n 3 "$dir/err"; exit 1; }
    t+=("$(tail -n 1 "$dir/time")")
  done
  secs=$(printf '%s\n' "${t[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
}

# row NAME BIN SMALL_ARGS -- LARGE_ARGS: one line with both times and the ratio.
row() {
  local name=$1 b=$2; shift 2
  local small=() large=()
  while [ "$1" != "--" ]; do small+=("$1"); shift; done
  shift
  large=("$@")
  median "$b" "${small[@]}"; local s=$secs
  median "$b" "${large[@]}"; local l=$secs
  if [[ "$l" == ">"* ]]; then
    printf "%-46s %8s s %8s s   ratio > %s\n" "$name" "$s" "$l" "$(awk -v s="$s" -v l="$limit" 'BEGIN {printf "%.0f", l / s}')"
  else
    printf "%-46s %8s s %8s s   ratio %5.1f (linear: 10)\n" "$name" "$s" "$l" "$(awk -v s="$s" -v l="$l" 'BEGIN {print l / (s > 0 ? s : 0.005)}')"
  fi
}

printf "%-46s %10s %10s\n" "" "small" "large (10x)"
for b in "$bin" ${other:+"$other"}; do
  row "scan, one expression, 20k / 200k calls ($(basename "$(dirname "$b")"))" "$b" \
    scan --no-cache -f json "$dir/calls20000.py" -- scan --no-cache -f json "$dir/calls200000.py"
  row "verify CSV, 10k / 100k columns ($(basename "$(dirname "$b")"))" "$b" \
    verify "$dir/ref10000.csv" "$dir/cand10000.csv" -- verify "$dir/ref100000.csv" "$dir/cand100000.csv"
done
