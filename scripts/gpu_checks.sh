#!/usr/bin/env bash
# Every check that needs the GPU machine, in one call; results under $OUT.
# Run there through the device tool, carrying build-device (made here by
# scripts/device_bundle.sh):
#   bash scripts/gpu_checks.sh
# It records (1) a `gpuopt bench` of NumPy against CuPy matmul, the JSON of
# which is tests/e2e/fixtures/h200_bench.json; (2) the GPU-dependent bench
# tests run against the real driver; (3) a CPU and a GPU run of one workload
# whose outputs `gpuopt verify` compares; (4) the wrong-on-purpose examples
# run for real, with their scan findings; (5) gpuopt doctor and fit
# (scripts/gpu_doctor_fit.sh: its own log and fixtures under $OUT); (6) gpuopt
# trace's suite and overhead benchmark (scripts/trace_gpu_suite.sh); (7) gpuopt
# try over examples/try and its reports (scripts/gpu_try.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_checks}
mkdir -p "$OUT"
G=$PWD/build-device/bundle/gpuopt
export XDG_CACHE_HOME=$(mktemp -d)
log() { printf '\n== %s\n' "$*"; }
{
log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import sys, numpy, cupy; print(sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__)'
"$G" --version

log "1. bench: NumPy vs CuPy float32 matmul, n = 512 and 4096"
cat >/tmp/mm_cpu.py <<'PY'
import sys, numpy as np
n = int(sys.argv[1]); a = np.ones((n, n), np.float32)
for _ in range(10): b = a @ a
PY
cat >/tmp/mm_gpu.py <<'PY'
import sys, cupy as cp
n = int(sys.argv[1]); a = cp.ones((n, n), cp.float32)
for _ in range(10): b = a @ a
cp.cuda.Device().synchronize()
PY
"$G" bench --max-time 45 -L n 512,4096 --export-json "$OUT/h200_bench.json" \
    "python3 /tmp/mm_cpu.py {n}" "python3 /tmp/mm_gpu.py {n}"
echo "bench exit: $?"

log "2. bench tests against the real driver"
GPUOPT=$G python3 -m pytest -q -p no:cacheprovider tests/e2e/test_bench.py 2>&1 | tail -5

log "3. verify: CPU vs GPU output of one FFT workload"
python3 - "$OUT" <<'PY'
import sys, numpy as np, cupy as cp
out = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((512, 4096)).astype(np.float32)
np.save("/tmp/ref.npy", np.abs(np.fft.rfft(x, axis=1)).astype(np.float32))
np.save("/tmp/gpu.npy", cp.asnumpy(cp.abs(cp.fft.rfft(cp.asarray(x), axis=1))).astype(np.float32))
PY
"$G" verify /tmp/ref.npy /tmp/gpu.npy && echo "verify: pass" || echo "verify exit: $?"
"$G" verify --format json /tmp/ref.npy /tmp/gpu.npy >"$OUT/h200_verify_fft.json"

log "4. the wrong-on-purpose examples, run for real, and what scan says about them"
for f in examples/wrong_*.py; do echo "-- $f"; python3 "$f"; done
"$G" scan --fail-on never examples/wrong_*.py | grep -E "GPU6|^Scanned"

log "5. doctor and fit (scripts/gpu_doctor_fit.sh)"
OUT="$OUT" bash scripts/gpu_doctor_fit.sh >/dev/null 2>&1
echo "gpu_doctor_fit exit: $? (its log: $OUT/h200_doctor_fit.log)"
log "6. gpuopt trace: the suite, the paths that do not trace, the overhead benchmark"
OUT=$OUT GPUOPT=$G bash scripts/trace_gpu_suite.sh

log "7. gpuopt try over examples/try, and the reports (scripts/gpu_try.sh)"
OUT="$OUT" bash scripts/gpu_try.sh
} 2>&1 | tee "$OUT/gpu_checks.log"
