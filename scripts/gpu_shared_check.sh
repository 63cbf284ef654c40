#!/usr/bin/env bash
# gpuopt trace on a GPU that other processes share (issue 24): one program
# that only launches tiny kernels, traced alone and again while two other
# processes keep the GPU busy with large matrix products. The GPU
# time-slices between the contexts; the tracer must count the time its
# queued kernels waited for the GPU as "held" (other work), not as the host
# starving the GPU, so both traces name launch-bound at the launching line,
# and the shared one says the GPU was shared. Run on the GPU machine through
# the device tool, carrying build-device (scripts/device_bundle.sh):
#   OUT=$OUT bash scripts/gpu_shared_check.sh
# Writes $OUT/shared_{alone,shared}.json (saved traces) and prints the reports.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_shared}
mkdir -p "$OUT"
G=$PWD/build-device/bundle/gpuopt
N=${N:-20000}
MODE=${MODE:---exact}  # every record: the gaps the split is made on (the default samples them)
cat >/tmp/hog.py <<'PY'
import sys, time, cupy as cp
a = cp.ones((8192, 8192), cp.float32)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(4):
        b = a @ a
    cp.cuda.Device().synchronize()
PY
cd tests/trace_programs
python3 cupy_tiny_kernels.py 1000 >/dev/null  # CuPy's kernel cache warm
"$G" trace -q $MODE --format json -o "$OUT/shared_alone.json" -- python3 cupy_tiny_kernels.py "$N" >/dev/null
echo "alone: exit $?"
python3 /tmp/hog.py 40 & h1=$!
python3 /tmp/hog.py 40 & h2=$!
sleep 8  # both hogs past their start-up, the GPU busy
"$G" trace -q $MODE --format json -o "$OUT/shared_shared.json" -- python3 cupy_tiny_kernels.py "$N" >/dev/null
echo "shared: exit $?"
kill $h1 $h2 2>/dev/null; wait
for k in alone shared; do
  echo "== $k"
  "$G" trace show --lines 3 --kernels 2 "$OUT/shared_$k.json"
done
