#!/usr/bin/env bash
# Two measurements on the GPU machine, one call (device tool, carrying
# build-device/bundle from scripts/device_bundle.sh):
#   - bench/pageable_probe.py: where fit's pageable rates and CuPy's part
#     (API, buffer, process), with gpuopt fit between the rounds;
#   - bench/trace_overhead.py on the PyTorch launch loop with every part of
#     the tracer turned off in turn, in every round.
# Results under $OUT: pageable_probe.json, trace_overhead_torch.json, probe.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_probe}
mkdir -p "$OUT"
G=$PWD/build-device/bundle/gpuopt
export XDG_CACHE_HOME=$(mktemp -d)
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== pageable probe"
timeout 200 python3 bench/pageable_probe.py --gpuopt "$G" --rounds ${PROBE_ROUNDS:-5} --out "$OUT/pageable_probe.json"
echo "pageable probe exit: $?"
echo "== trace overhead, torch_launch, every part in every round"
timeout 330 python3 bench/trace_overhead.py --gpuopt "$G" --workloads torch_launch --rounds ${TRACE_ROUNDS:-3} \
  --modes ${TRACE_MODES:-trace,trace_callbacks_only,trace_activity_only,trace_driver_api_only,trace_no_python_lines,trace_nothing_on} \
  --diagnose-every-round --json "$OUT/trace_overhead_torch.json"
echo "trace overhead exit: $?"
} 2>&1 | tee "$OUT/probe.log"
