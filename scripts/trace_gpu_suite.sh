#!/usr/bin/env bash
# gpuopt trace's checks on the GPU machine, in one call (scripts/gpu_checks.sh
# runs this; it builds nothing: it uses the bundle of scripts/device_bundle.sh).
#   1. the suite: each program of tests/trace_programs/ with one known
#      bottleneck, traced with --timeline and saved; tests/trace_programs/
#      check_suite.py checks the rule and the line it names, and the trace's
#      kernel and copy times against the program's own CUDA events;
#   1b. record sampling: the launch-heavy loops sampled (the default) against a
#      full trace (--exact) of the same program (TRACE_SAMPLE_SETTINGS names the
#      settings, TRACE_SAMPLE_REPEAT runs each on CuPy's loop that many times);
#   2. the paths that do not trace: --cupti with no library, --strict, another
#      CUPTI subscriber (torch.profiler inside the program);
#   3. the overhead benchmark (bench/trace_overhead.py; TRACE_OVERHEAD=0 leaves it out,
#      TRACE_OVERHEAD_ARGS replaces its default arguments, e.g. the workloads, modes and
#      rounds to measure; TRACE_OVERHEAD_S, default 600, stops it after that many seconds
#      with the rounds measured saved), and with TRACE_CUPTI_SETTINGS=1 CUPTI's buffer
#      settings on the launch loops.
# TRACE_SECTIONS (default "1 1b 2") picks the sections to run before 3.
# Results under $OUT: trace_suite.log, trace_overhead.json and
# trace_fixtures.tar.gz (the saved traces, which become
# tests/e2e/fixtures/trace/, with each run's report and output).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/trace_suite}
mkdir -p "$OUT"
G=${GPUOPT:-$PWD/build-device/bundle/gpuopt}
P=tests/trace_programs
work=$(mktemp -d)
fix=$work/trace
mkdir -p "$fix"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
# Python packages the machine lacks (the nvtx package), carried as wheels.
if [ -n "${TRACE_WHEELS:-}" ] && ls "$TRACE_WHEELS"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/trace-site "$TRACE_WHEELS"/*.whl &&
    export PYTHONPATH=/tmp/trace-site${PYTHONPATH:+:$PYTHONPATH}
fi
log() { printf '\n== %s\n' "$*"; }
fails=0
{
log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import sys, cupy, torch; print(sys.version.split()[0], "cupy", cupy.__version__, "torch", torch.__version__)'
python3 -c 'import nvtx; print("nvtx", nvtx.__file__)' 2>&1 | tail -1
ls /usr/local/cuda*/targets/x86_64-linux/lib/libcupti.so* 2>/dev/null | head -3
"$G" --version

sections=" ${TRACE_SECTIONS:-1 1b 2} "
if [[ $sections == *" 1 "* ]]; then
log "1. the suite (gpuopt trace --timeline; checked by check_suite.py)"
# name  program  argument  (N kept small: these traces become the test fixtures)
suite=(
  "cupy_roundtrip cupy_roundtrip.py 500"
  "cupy_pageable cupy_pageable.py 256"
  "cupy_tiny_kernels cupy_tiny_kernels.py 3000"
  "cupy_sync_loop cupy_sync_loop.py 500"
  "cupy_host_work cupy_host_work.py 20"
  "cupy_compute_bound cupy_compute_bound.py 10"
  "cupy_crash cupy_crash.py 300"
  "torch_roundtrip torch_roundtrip.py 500"
  "torch_tiny_kernels torch_tiny_kernels.py 3000"
  "torch_sync_loop torch_sync_loop.py 500"
  "torch_compute_bound torch_compute_bound.py 10"
  "torch_pinned_copy torch_pinned_copy.py 256"
  "multiproc multiproc.py 0"
  "nvtx_cupy nvtx_cupy.py 0"
  "nvtx_fallback nvtx_fallback.py 30"
)
for entry in "${suite[@]}"; do
  read -r name prog n <<<"$entry"
  args=()
  [ "$n" != 0 ] && args=("$n")
  start=$(date +%s%N)
  (cd "$P" && "$G" trace -q --timeline --format json -o "$fix/$name.json" -- python3 "$prog" "${args[@]}" \
      >"$fix/$name.report.json" 2>"$fix/$name.out")
  rc=$?
  printf -- '-- %s: exit %d, %d ms\n' "$name" "$rc" $(( ($(date +%s%N) - start) / 1000000 ))
  (cd "$P" && "$G" trace show --lines 5 --kernels 3 "$fix/$name.json") 2>&1 | sed -n '1,12p'
  python3 "$P/check_suite.py" "$P/$prog" "$fix/$name.report.json" "$fix/$name.out" || fails=$((fails + 1))
done

fi

if [[ $sections == *" 1b "* ]]; then
log "1b. record sampling: launch-heavy loops sampled (the default) and with every record (--exact)"
# Enough launches (100,000, about 1 s) for several sampling windows; the
# sampled traces become fixtures too (NAME_SETTING.json). Settings: "sampled",
# gpuopt trace's default (the records off through a fast stretch); "windows",
# 10 ms windows every 200 ms; "sparse", 10 ms a second; "fast", 10 ms every 100 ms.
for prog in cupy_tiny_kernels torch_tiny_kernels; do
  n=100000
  (cd "$P" && "$G" trace -q --exact --format json -- python3 "$prog.py" "$n" \
      >"$work/${prog}_exact.report.json" 2>"$work/${prog}_exact.out")
  echo "-- ${prog} every record: exit $?"
  for setting in ${TRACE_SAMPLE_SETTINGS:-sampled windows}; do
    opts=()
    case $setting in
      sampled) ;;
      windows) opts=(--set sample_window_ms=10) ;;
      sparse) opts=(--set sample_window_ms=10 --set sample_period_ms=1000) ;;
      fast) opts=(--set sample_window_ms=10 --set sample_period_ms=100) ;;
      *) echo "unknown sampling setting: $setting"; fails=$((fails + 1)); continue ;;
    esac
    runs=1
    [ "$prog" = cupy_tiny_kernels ] && runs=${TRACE_SAMPLE_REPEAT:-1}
    for ((k = 1; k <= runs; k++)); do
      name=${prog}_$setting
      [ "$k" -gt 1 ] && name=${name}_$k
      (cd "$P" && "$G" trace -q "${opts[@]}" --format json -o "$fix/$name.json" \
          -- python3 "$prog.py" "$n" >"$fix/$name.report.json" 2>"$fix/$name.out")
      echo "-- ${prog} sampled ($setting, run $k): exit $?"
      (cd "$P" && "$G" trace show --lines 3 --kernels 2 "$fix/$name.json") 2>&1 | sed -n '1,16p'
      python3 "$P/check_suite.py" "$P/$prog.py" "$fix/$name.report.json" "$fix/$name.out" ||
        fails=$((fails + 1))
      python3 "$P/check_sampled.py" "$fix/$name.report.json" "$work/${prog}_exact.report.json" "$n" ||
        fails=$((fails + 1))
    done
  done
done
fi

if [[ $sections == *" 2 "* ]]; then
log "2. the paths that do not trace"
"$G" trace -q --cupti /nonexistent/libcupti.so -- python3 -c 'print(1)'; echo "  --cupti missing: exit $?"
CUDA_INJECTION64_PATH=/opt/nvidia/nsight-systems/lib/libToolsInjection64.so "$G" trace -q --strict -- python3 -c 'print(1)'
echo "  another injection + --strict: exit $?"
(cd "$P" && "$G" trace -q --format json -o "$fix/torch_profiler_inside.json" -- python3 torch_profiler_inside.py \
    >"$fix/torch_profiler_inside.report.json" 2>"$fix/torch_profiler_inside.out"); echo "  torch.profiler inside: exit $?"
grep -E "GPUOPT_CHECK|CUPTI|gpuopt" "$fix/torch_profiler_inside.out" | head -8
python3 - "$fix/torch_profiler_inside.report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("  gpuopt: traced", r["traced"], "kernels", r["budget"]["kernels"], [p["status"] for p in r["processes"]])
PY
(cd "$P" && "$G" trace -q --strict -- python3 -c 'import torch; from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]):
    x = torch.ones(4, device="cuda"); torch.cuda.synchronize()
print("ran")' 2>&1 | tail -4); echo "  torch.profiler first, then CUDA, --strict: exit $?"
fi

if [ "${TRACE_OVERHEAD:-1}" != 0 ]; then
  log "3. overhead (bench/trace_overhead.py)"
  read -r -a overhead_args <<<"${TRACE_OVERHEAD_ARGS:---reps 3 --rounds 3}"
  timeout "${TRACE_OVERHEAD_S:-600}" python3 bench/trace_overhead.py --gpuopt "$G" "${overhead_args[@]}" \
    --json "$OUT/trace_overhead.json"
else
  log "3. overhead: left out (TRACE_OVERHEAD=0)"
fi
if [ "${TRACE_CUPTI_SETTINGS:-0}" != 0 ]; then
  # CUPTI's own settings, each against the default on the launch loops: does
  # one of them take the per-launch cost of the records down?
  log "3b. CUPTI's settings on the launch loops (TRACE_CUPTI_SETTINGS=1)"
  timeout "${TRACE_CUPTI_SETTINGS_S:-240}" python3 bench/trace_overhead.py --gpuopt "$G" --reps 3 --rounds 3 \
    --workloads torch_launch,cupy_launch --json "$OUT/trace_cupti_settings.json" \
    --modes plain,trace,trace_exact,trace_sample_sparse,trace_zeroed_buffers,trace_host_pinned,trace_shared_buffer,trace_device_buffer_64mb,trace_buffer_64kb
fi

log "suite: $fails program(s) with a failed check"
} 2>&1 | tee "$OUT/trace_suite.log"
tar -C "$work" -czf "$OUT/trace_fixtures.tar.gz" trace
rm -rf "$work"
