#!/usr/bin/env bash
# Benchmark: scan the Debian scientific corpus (every .py file that
# python3-numpy, -scipy, -pandas, -sklearn, -skimage and -networkx install)
# and compare, in the same run, gpuopt against pyflakes and against CPython's
# own ast.parse of the same files. Prints wall time, peak memory and ratios.
#
# Usage: bench/scan_corpus.sh [GPUOPT_BINARY]   (default build/src/gpuopt)
# Needs: the packages above, pyflakes3 (apt-get install pyflakes3), GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/gpuopt}
pkgs="python3-numpy python3-scipy python3-pandas python3-sklearn python3-skimage python3-networkx"
list=$(mktemp)
trap 'rm -f "$list" "$list".*' EXIT
dpkg -L $pkgs | grep '\.py$' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done >"$list"
files=$(wc -l <"$list")
bytes=$(xargs -d '\n' cat <"$list" | wc -c)
lines=$(xargs -d '\n' cat <"$list" | wc -l)
echo "corpus: $files files, $((bytes / 1000000)) MB, $lines lines ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"

measure() { # measure NAME CMD...: prints "NAME seconds peakMB", returns seconds in $secs
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$list.time" "$@" >/dev/null 2>"$list.err" || true
  read -r secs kb < <(tail -n 1 "$list.time")
  printf "%-28s %8.2f s %8d MB\n" "$name" "$secs" "$((kb / 1024))"
}

mapfile -t paths <"$list"
measure "gpuopt scan (all cores)" "$bin" scan --format json --fail-on never -- "${paths[@]}"
t_gpuopt=$secs
measure "gpuopt scan (1 thread)" "$bin" scan --jobs 1 --format json --fail-on never -- "${paths[@]}"
t_gpuopt1=$secs
"$bin" scan --format json --fail-on never -- "${paths[@]}" >"$list.json" 2>/dev/null || true
python3 - "$list.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
print(f"  gpuopt: {s['files_scanned']} files scanned, {s['files_with_errors']} errors, {s['findings']} findings")
PY
measure "CPython ast.parse" /usr/bin/python3 -c '
import ast, sys
for p in open(sys.argv[1]).read().splitlines():
    try:
        ast.parse(open(p, "rb").read(), p)
    except SyntaxError:
        pass' "$list"
t_ast=$secs
if command -v pyflakes3 >/dev/null; then
  measure "pyflakes" pyflakes3 "${paths[@]}"
  t_pyflakes=$secs
else
  echo "pyflakes: not installed (apt-get install pyflakes3)"; t_pyflakes=0
fi
python3 - "$t_gpuopt" "$t_gpuopt1" "$t_ast" "$t_pyflakes" <<'PY'
import sys
g, g1, a, p = map(float, sys.argv[1:])
print(f"ratio: ast.parse / gpuopt = {a / g:.1f}x (1 thread: {a / g1:.1f}x)")
if p:
    print(f"ratio: pyflakes / gpuopt = {p / g:.1f}x (1 thread: {p / g1:.1f}x)")
PY
