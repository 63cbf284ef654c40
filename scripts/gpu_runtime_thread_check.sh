#!/usr/bin/env bash
# gpuopt trace on programs whose CUDA calls come from a runtime's own thread
# (issue 24): JAX's dispatch (tests/trace_programs/jax_host_batching.py) and
# PyTorch's autograd engine (torch_backward.py). Those calls have no Python
# frame; the tracer charges them to the newest call made from one, marked
# as a runtime thread's. Run on the GPU machine through the device tool,
# carrying build-device (scripts/device_bundle.sh):
#   OUT=$OUT bash scripts/gpu_runtime_thread_check.sh
# Writes $OUT/runtime_{jax,torch}_{exact,default}.json and prints the reports.
set -uo pipefail
cd "$(dirname "$0")/../tests/trace_programs"
OUT=${OUT:-/tmp/gpu_runtime}
mkdir -p "$OUT"
G=$(cd ../.. && pwd)/build-device/bundle/gpuopt
for p in jax:jax_host_batching.py torch:torch_backward.py; do
  name=${p%%:*} prog=${p#*:}
  python3 "$prog" 20 >/dev/null  # caches warm (XLA's, the kernels')
  for mode in exact default; do
    flag=; [ $mode = exact ] && flag=--exact
    "$G" trace -q $flag --format json -o "$OUT/runtime_${name}_$mode.json" -- python3 "$prog" >/dev/null
    echo "$name $mode: exit $?"
  done
done
for f in "$OUT"/runtime_*.json; do
  echo "== $f"
  "$G" trace show --lines 6 --kernels 2 "$f" | sed -n '1,/^Kernels/p'
done
