#!/usr/bin/env bash
# Benchmark: scan the Debian scientific corpus (every .py file that
# python3-numpy, -scipy, -pandas, -sklearn, -skimage and -networkx install)
# and compare, in the same run: gpuopt cold (empty cache), gpuopt warm (the
# cache from the cold run), gpuopt without a cache on one thread, pyflakes,
# and CPython's own ast.parse of the same files. Prints wall time, peak
# memory, the ratios and the targets of issue 3.
#
# Method. Each gpuopt row is the median of RUNS runs (default 3; min and max
# shown), after one untimed run that warms the page cache for the sources.
# Every run writes its JSON report with -o to a path where no file is: the
# report is checked (a digest of it, without the timing) and deleted before
# the next run. So no run pays for what the file system does on replacing a
# file (ext4 starts writing back the new one at once), and each run writes
# into memory the machine has used before (on a virtual machine, memory
# touched for the first time can cost more than the scan). Every run, cold,
# warm and without cache, must give the same report.
#
# Usage: bench/scan_corpus.sh [GPUOPT_BINARY [OTHER_BINARY]]
#   (default build/src/gpuopt). With OTHER_BINARY (e.g. a build of an earlier
#   commit), every gpuopt row is measured for both, their runs alternating,
#   each report must be the same for both, and the rows end with the ratio
#   OTHER / GPUOPT; the targets are checked for GPUOPT_BINARY.
# Needs: those packages, pyflakes3 (apt-get install pyflakes3), GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/gpuopt}
other=${2:-}
runs=${RUNS:-3}
pkgs="python3-numpy python3-scipy python3-pandas python3-sklearn python3-skimage python3-networkx"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg -L $pkgs | grep '\.py$' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done >"$work/list"
mapfile -t paths <"$work/list"
bytes=$(cat "${paths[@]}" | wc -c)
lines=$(cat "${paths[@]}" | wc -l)
echo "corpus: ${#paths[@]} files, $((bytes / 1000000)) MB, $lines lines"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GB"
echo "gpuopt: $bin ($("$bin" --version)), report: --format json -o FILE; median of $runs runs (min-max)"
[ -n "$other" ] && echo "other:  $other ($("$other" --version)), its runs alternating with gpuopt's"
echo

timed() { # timed CMD...: runs it; sets secs (wall, from bash's clock) and kb (peak RSS)
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$work/time" "$@" >/dev/null 2>"$work/err" || true
  local t1=$EPOCHREALTIME
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  kb=$(tail -n 1 "$work/time")
}

measure() { # measure NAME CMD...: prints a row; sets secs
  local name=$1; shift
  timed "$@"
  printf "%-36s %8.2f s %8d MB\n" "$name" "$secs" "$((kb / 1024))"
}

digest() { # digest REPORT: a hash of the JSON report without its timing
  /usr/bin/python3 - "$1" <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
d["summary"].pop("seconds")
s = d["summary"]
print(hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16],
      s["findings"], s["files_scanned"], s["files_with_errors"])
PY
}

cache="$work/cache"
export XDG_CACHE_HOME=$cache
peak=0
: >"$work/digests"
: >"$work/digests.other"
scan_runs() { # scan_runs NAME empty|keep ARGS...: RUNS runs, each from an empty cache
  #              or keeping the cache as it is; sets secs (median); with $other,
  #              the other binary's runs alternate with these (its own cache)
  local name=$1 cache_mode=$2; shift 2
  local times=() otimes=() mb=0 omb=0
  for ((r = 0; r < runs; r++)); do
    for which in bin other; do
      local exe=$bin c=$cache
      if [ "$which" = other ]; then
        [ -n "$other" ] || continue
        exe=$other c=$cache.other
      fi
      [ "$cache_mode" = empty ] && rm -rf "$c"
      XDG_CACHE_HOME=$c timed "$exe" scan --format json --fail-on never -o "$work/report.json" "$@" -- "${paths[@]}"
      if [ "$which" = bin ]; then
        times+=("$secs"); ((kb / 1024 > mb)) && mb=$((kb / 1024))
      else
        otimes+=("$secs"); ((kb / 1024 > omb)) && omb=$((kb / 1024))
      fi
      if [ "$which" = bin ]; then
        digest "$work/report.json" >>"$work/digests"
      else
        digest "$work/report.json" >>"$work/digests.other"
      fi
      rm -f "$work/report.json"
    done
  done
  ((mb > peak)) && peak=$mb
  mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -g)
  secs=${sorted[$((runs / 2))]}
  printf "%-36s %8.3f s %8d MB   (%.3f-%.3f)\n" "$name" "$secs" "$mb" "${sorted[0]}" "${sorted[$((runs - 1))]}"
  if [ -n "$other" ]; then
    mapfile -t osorted < <(printf '%s\n' "${otimes[@]}" | sort -g)
    local osecs=${osorted[$((runs / 2))]}
    printf "%-36s %8.3f s %8d MB   (%.3f-%.3f)   other / gpuopt %.2fx\n" "  other binary" "$osecs" "$omb" \
      "${osorted[0]}" "${osorted[$((runs - 1))]}" "$(awk -v a="$osecs" -v b="$secs" 'BEGIN { print a / b }')"
  fi
}

# untimed: brings the sources into the page cache, as for every tool below
"$bin" scan --no-cache --format json --fail-on never -o "$work/report.json" -- "${paths[@]}" >/dev/null 2>&1 || true
rm -f "$work/report.json"
scan_runs "gpuopt cold (empty cache)" empty
t_cold=$secs
scan_runs "gpuopt warm (cached)" keep
t_warm=$secs
scan_runs "gpuopt --no-cache" keep --no-cache
t_nc=$secs
scan_runs "gpuopt --no-cache --jobs 1" keep --no-cache --jobs 1
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
/usr/bin/python3 - "$work" "$t_cold" "$t_warm" "$t_nc" "$t_nc1" "$t_ast" "$t_pyflakes" "$peak" <<'PY'
import sys
work = sys.argv[1]
cold, warm, nc, nc1, ast_t, pyfl = map(float, sys.argv[2:8])
mem = int(sys.argv[8])
digests = open(f"{work}/digests").read().split("\n")[:-1]
h, findings, files, errors = digests[0].split()
print(f"\nfindings: {findings} in {files} files, {errors} unreadable; "
      f"all {len(digests)} gpuopt reports identical: {len(set(digests)) == 1}")
others = open(f"{work}/digests.other").read().split("\n")[:-1]
if others:
    o = others[0].split()
    print(f"other binary: {o[1]} findings in {o[2]} files; all {len(others)} of its reports "
          f"identical: {len(set(others)) == 1}; same report as gpuopt: {o[0] == h}")
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
