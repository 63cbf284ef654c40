#!/usr/bin/env bash
# The GPU machine's part of issue 12, in one call (scripts/gpu_checks.sh
# runs it): `gpuopt doctor` and `gpuopt fit` against the real driver, the
# same copies timed with CuPy and CUDA events in the same run
# (bench/fit_vs_cupy.py --fresh-process --control: nine rounds (FIT_ROUNDS), gpuopt and CuPy taking turns, each in a new
# process, and a second CuPy process against the first), `pip
# list` and the packages' own version and CUDA reports to hold doctor's table
# against, and the doctor and fit tests run against the real driver. Results under $OUT, the names the
# fixtures in tests/e2e/fixtures/ have:
#   h200_doctor.json       gpuopt doctor --format json
#   h200_fit.json          gpuopt fit --python python3 --format json (measured)
#   h200_ceilings.json     the cache file that run wrote
#   h200_fit_vs_cupy.json  bench/fit_vs_cupy.py's rows and summary
#   h200_pip_list.json     python3 -m pip list --format json
#   h200_doctor_fit.log    everything printed, the text reports included
# Needs build-device/bundle (scripts/device_bundle.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_doctor_fit}
mkdir -p "$OUT"
G=$PWD/build-device/bundle/gpuopt
export XDG_CACHE_HOME=$(mktemp -d)
log() { printf '\n== %s\n' "$*"; }
{
log "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader
nvidia-smi topo -m
"$G" --version

log "doctor (text, then JSON)"
"$G" doctor --python python3 --verbose; echo "doctor exit: $?"
"$G" doctor --python python3 --format json -o "$OUT/h200_doctor.json"; echo "doctor json exit: $?"

log "fit: measure (python3 for the latency from Python)"
time "$G" fit --python python3 --format json -o "$OUT/h200_fit.json"; echo "fit exit: $?"
cp "$XDG_CACHE_HOME"/gpuopt/ceilings/*.json "$OUT/h200_ceilings.json"
log "fit: from the cache, text, every size"
"$G" fit -v; echo "fit exit: $?"
log "fit: answers"
"$G" fit --bytes 8GiB --cpu-seconds 2; echo "fit exit: $?"
"$G" fit --dtype float32 --shape 100000,1000 --cpu-seconds 0.05; echo "fit exit: $?"
"$G" fit --bytes 400GiB --cpu-seconds 120; echo "fit exit: $?"
"$G" fit --bytes 1MiB --cpu-seconds 0.00001; echo "fit exit: $?"
python3 -c "import numpy as np; np.save('/tmp/ws.npy', np.zeros((4096, 4096), np.float32))"
"$G" fit /tmp/ws.npy --cpu-seconds 0.3 --format json | python3 -c "import json,sys; a=json.load(sys.stdin)['answer']; print(a['verdict'], a['best_speedup'])"

log "the same copies with CuPy and CUDA events"
python3 bench/fit_vs_cupy.py --gpuopt "$G" --fresh-process --control --rounds "${FIT_ROUNDS:-9}" --out "$OUT/h200_fit_vs_cupy.json"; echo "fit_vs_cupy exit: $?"

log "doctor and fit tests against the real driver"
# (not the duplicate-build test: its wheels live in .venv/doctor-duplicate,
# which scripts/setup.sh makes here and which does not travel)
GPUOPT=$G python3 -m pytest -q -p no:cacheprovider tests/e2e/test_doctor.py tests/e2e/test_fit.py \
  --deselect tests/e2e/test_doctor.py::test_two_builds_of_one_package_are_found_with_their_fix 2>&1 | tail -15

log "pip list and the packages' own reports"
python3 -m pip list --format json >"$OUT/h200_pip_list.json"; echo "pip list exit: $?"
python3 - <<'PY'
import importlib
for mod, report in [
    ("cupy", lambda m: (m.__version__, "runtime", m.cuda.runtime.runtimeGetVersion(), "devices", m.cuda.runtime.getDeviceCount())),
    ("torch", lambda m: (m.__version__, "cuda", m.version.cuda, "available", m.cuda.is_available(), m.cuda.device_count())),
    ("jax", lambda m: (m.__version__, m.devices())),
    ("numba", lambda m: (m.__version__,)),
    ("numba.cuda", lambda m: (m.is_available(), m.runtime.get_version())),
]:
    try:
        print(mod, *report(importlib.import_module(mod)))
    except Exception as e:
        print(mod, "error:", type(e).__name__, e)
import cupy
cupy.show_config()
PY
} 2>&1 | tee "$OUT/h200_doctor_fit.log"
