#!/usr/bin/env bash
# Benchmark: scan the Debian scientific corpus (every .py file that
# python3-numpy, -scipy, -pandas, -sklearn, -skimage and -networkx install)
# and compare, in the same run: gpuopt cold (empty cache), gpuopt warm (the
# cache from the cold run), gpuopt without a cache on one thread, pyflakes,
# and CPython's own ast.parse of the same files. Prints wall time, peak
# memory, the ratios and the targets of issue 3.
#
# Usage: bench/scan_corpus.sh [GPUOPT_BINARY]   (default build/src/gpuopt)
# Needs: those packages, pyflakes3 (apt-get install pyflakes3), GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/gpuopt}
pkgs="python3-numpy python3-scipy python3-pandas python3-sklearn python3-skimage python3-networkx"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg -L $pkgs | grep '\.py$' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done >"$work/list"
mapfile -t paths <"$work/list"
bytes=$(cat "${paths[@]}" | wc -c)
lines=$(cat "${paths[@]}" | wc -l)
echo "corpus: ${#paths[@]} files, $((bytes / 1000000)) MB, $lines lines"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GB"
echo "gpuopt: $("$bin" --version), report: --format json to a file"
echo

measure() { # measure NAME CMD...: prints a row; sets secs and mb
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || true
  read -r secs kb < <(tail -n 1 "$work/time")
  mb=$((kb / 1024))
  printf "%-36s %8.2f s %8d MB\n" "$name" "$secs" "$mb"
}

cache="$work/cache"   # a new directory: nothing cached yet
export XDG_CACHE_HOME=$cache
measure "gpuopt cold (empty cache)" "$bin" scan --format json --fail-on never -o "$work/cold.json" -- "${paths[@]}"
t_cold=$secs; m_cold=$mb
measure "gpuopt warm (cached)" "$bin" scan --format json --fail-on never -o "$work/warm.json" -- "${paths[@]}"
t_warm=$secs; m_warm=$mb
measure "gpuopt --no-cache" "$bin" scan --no-cache --format json --fail-on never -o "$work/nc.json" -- "${paths[@]}"
t_nc=$secs; m_nc=$mb
measure "gpuopt --no-cache --jobs 1" "$bin" scan --no-cache --jobs 1 --format json --fail-on never -o "$work/nc1.json" -- "${paths[@]}"
t_nc1=$secs
unset XDG_CACHE_HOME
measure "CPython ast.parse" /usr/bin/python3 -c '
import ast, sys
for p in open(sys.argv[1]).read().splitlines():
    try:
        ast.parse(open(p, "rb").read(), p)
    except SyntaxError:
        pass' "$work/list"
t_ast=$secs
if command -v pyflakes3 >/dev/null; then
  measure "pyflakes" pyflakes3 "${paths[@]}"
  t_pyflakes=$secs
else
  echo "pyflakes: not installed (apt-get install pyflakes3)"; t_pyflakes=0
fi
python3 - "$work" "$t_cold" "$t_warm" "$t_nc" "$t_nc1" "$t_ast" "$t_pyflakes" "$m_cold" "$m_warm" "$m_nc" <<'PY'
import json, sys
work = sys.argv[1]
cold, warm, nc, nc1, ast_t, pyfl = map(float, sys.argv[2:8])
mem = max(map(int, sys.argv[8:11]))
docs = {}
for name in ("cold", "warm", "nc"):
    d = json.load(open(f"{work}/{name}.json"))
    d["summary"].pop("seconds")
    docs[name] = d
s = docs["cold"]["summary"]
print(f"\nfindings: {s['findings']} in {s['files_scanned']} files, {s['files_with_errors']} unreadable; "
      f"warm and --no-cache reports identical to cold: {docs['warm'] == docs['cold'] == docs['nc']}")
def row(what, value, target, ok):
    print(f"{what:<44} {value:>8}   target {target:<10} {'met' if ok else 'NOT MET'}")
print()
if pyfl:
    row("pyflakes / gpuopt cold", f"{pyfl / cold:.1f}x", ">= 25x", pyfl / cold >= 25)
row("ast.parse / gpuopt cold", f"{ast_t / cold:.2f}x", "> 1x", ast_t / cold > 1)
row("gpuopt cold / gpuopt warm", f"{cold / warm:.1f}x", ">= 10x", cold / warm >= 10)
row("peak memory (largest gpuopt run)", f"{mem} MB", "< 200 MB", mem < 200)
print(f"\n(no cache: {nc:.2f} s on all cores, {nc1:.2f} s on one; pyflakes / no-cache {pyfl / nc:.1f}x)" if pyfl else "")
PY
