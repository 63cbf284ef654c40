#!/usr/bin/env bash
# Runs one verdict evaluation set on the GPU machine (bench/verdict_eval/README.md):
# every program under gpuopt trace with its defaults and with --exact (each trace
# saved), every port pair under gpuopt try, and, with ROUNDS=N, N interleaved rounds
# of each program plain and under the default trace (the default's overhead).
#   OUT=/tmp/out SET=set1 [ROUNDS=3] [PARTS="trace try"] [JOBS=3] [TRY_ARGS="--max-time 6"] \
#     [EVAL_WHEELS=DIR] [TAG=name] [WARM=0] bash bench/verdict_eval/run_eval.sh
# JOBS above 1 runs programs side by side on the one GPU: its time-slicing
# then shows as gaps in each program's records (set2's first reading).
# TRY_ARGS may shorten the benchmarks, never below --min-runs 5: with fewer
# rounds there is no 95% interval and every verdict is "measurement" (the
# first reading of set1's ports was lost that way).
# Needs the device bundle (scripts/device_bundle.sh). Writes $OUT/$SET.tgz: per
# program NAME.{default,exact}.{json,report.json,out,rc}, the overhead timings
# (overhead.tsv), and per port its try output and results directory (JSON, reports).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/verdict_eval}
SET=${SET:-set1}
G=${GPUOPT:-$PWD/build-device/bundle/gpuopt}
src=$PWD/bench/verdict_eval/$SET
work=$(mktemp -d)
res=$work/$SET
mkdir -p "$res/traces" "$res/ports" "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 XDG_CACHE_HOME=$work/cache
# The results are packed however the run ends: a `timeout` around this
# script (SIGTERM) must still leave what was measured (the first reading's
# second call lost everything to one).
pack() {
  trap - EXIT TERM INT
  tar -C "$work" -czf "$OUT/$SET${TAG:+_$TAG}.tgz" "$SET" 2>/dev/null
  ls -la "$OUT"
  rm -rf "$work"
}
trap pack EXIT
trap 'exit 143' TERM INT
# Wheels the machine lacks or needs older (numba-cuda 0.30.4 fails with the
# machine's numpy 2.5 at np.row_stack: carry numpy 2.4), installed apart.
if [ -n "${EVAL_WHEELS:-}" ] && ls "$EVAL_WHEELS"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/site" "$EVAL_WHEELS"/*.whl &&
    export PYTHONPATH=$work/site${PYTHONPATH:+:$PYTHONPATH}
fi
parts=" ${PARTS:-trace try} "
{
echo "== $SET ($(date -u +%FT%TZ))"
"$G" --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import sys, numpy, cupy, torch; print(sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__, "torch", torch.__version__)'
python3 -c 'import jax; print("jax", jax.__version__, jax.devices())' 2>&1 | tail -1
python3 -c 'import numba_cuda; print("numba-cuda", numba_cuda.__version__)' 2>&1 | tail -1
cp -r "$src/programs" "$work/programs"
# what ran, and the expectations as they stood, kept with the results
mkdir -p "$res/ran"
cp -r "$src/programs" "$res/ran/" && cp "$src"/expected*.tsv "$res/ran/" 2>/dev/null
progs=()
for f in "$work"/programs/*.py; do
  case $f in *_helper.py|*/_*) continue ;; esac
  progs+=("$(basename "$f" .py)")
done
# one traced run: PROGRAM MODE (default | exact)
trace_one() {
  local p=$1 mode=$2 opts=() start rc
  [ "$mode" = exact ] && opts=(--exact)
  start=$(date +%s%N)
  (cd "$work/programs" && timeout 120 "$G" trace -q "${opts[@]}" --format json -o "$res/traces/$p.$mode.json" \
      -- python3 "$p.py" >"$res/traces/$p.$mode.report.json" 2>"$res/traces/$p.$mode.out")
  rc=$?
  echo $rc >"$res/traces/$p.$mode.rc"
  echo $(( ($(date +%s%N) - start) / 1000000 )) >"$res/traces/$p.$mode.ms"
}
export -f trace_one
export G work res
if [[ $parts == *" trace "* ]]; then
  # One plain run of each program first (WARM=0 skips it): kernel caches
  # (CuPy's, numba's, XLA's) are then as warm for the default trace as for
  # --exact, as on a user's machine; set3's first reading ran cold defaults.
  if [ "${WARM:-1}" != 0 ]; then
    for p in "${progs[@]}"; do (cd "$work/programs" && timeout 120 python3 "$p.py" >/dev/null 2>&1); done
  fi
  # JOBS runs at once (default 1): the programs share the GPU and the CPUs then
  for p in "${progs[@]}"; do printf '%s default\n%s exact\n' "$p" "$p"; done |
    xargs -P "${JOBS:-1}" -L 1 bash -c 'trace_one "$0" "$1"'
  for p in "${progs[@]}"; do
    for mode in default exact; do
      printf -- '-- %s %s: exit %s, %s ms\n' "$p" $mode "$(cat "$res/traces/$p.$mode.rc")" "$(cat "$res/traces/$p.$mode.ms")"
      python3 - "$res/traces/$p.$mode.report.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("   (no report:", e, ")"); sys.exit(0)
for f in r.get("findings", [])[:3]:
    print(f"   {f['rule']:<18} {f.get('cost_s', 0):8.3f}s  {f.get('line')}")
PY
    done
  done
fi
if [ "${ROUNDS:-0}" -gt 0 ]; then
  echo "== overhead: ${ROUNDS} rounds, plain and default trace, interleaved"
  printf 'program\tround\tmode\twall_s\trc\n' >"$res/overhead.tsv"
  for ((r = 1; r <= ROUNDS; r++)); do
    for p in "${progs[@]}"; do
      for mode in plain trace; do
        start=$(date +%s%N)
        if [ $mode = plain ]; then
          (cd "$work/programs" && timeout 120 python3 "$p.py" >/dev/null 2>&1)
        else
          (cd "$work/programs" && timeout 120 "$G" trace -q --format json -- python3 "$p.py" >/dev/null 2>&1)
        fi
        rc=$?
        # shell arithmetic only: the GPU machine has no bc (set4's first
        # overhead reading wrote 0 for every run through it)
        us=$(( ($(date +%s%N) - start) / 1000 ))
        printf '%s\t%d\t%s\t%d.%06d\t%d\n' "$p" $r $mode $((us / 1000000)) $((us % 1000000)) $rc \
          >>"$res/overhead.tsv"
      done
    done
  done
  tail -n +2 "$res/overhead.tsv" | awk -F'\t' '{print $1, $3}' | sort | uniq -c | head -3
fi
if [[ $parts == *" try "* ]] && [ -d "$src/ports" ]; then
  for d in "$src"/ports/*/; do
    name=$(basename "$d")
    cp -r "$d" "$work/port_$name"
    echo "== try $name"
    start=$(date +%s%N)
    read -r -a try_args <<<"${TRY_ARGS:-}"
    (cd "$work/port_$name" && timeout 240 "$G" try --contract gpuopt.toml -r gpuopt-try --fresh "${try_args[@]}") \
      >"$res/ports/$name.try.out" 2>&1
    rc=$?
    echo "   exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms"
    tail -n 12 "$res/ports/$name.try.out" | sed 's/^/   /'
    mkdir -p "$res/ports/$name"
    (cd "$work/port_$name/gpuopt-try" 2>/dev/null && for f in *.json *.md; do case $f in *.trace.json) ;; *) cp "$f" "$res/ports/$name/" ;; esac; done 2>/dev/null)
  done
fi
} 2>&1 | tee "$res/run.log"
