#!/usr/bin/env bash
# Benchmark: `gpuopt verify` against numpy.load + numpy.testing.assert_allclose
# on the same two 256 MB float32 .npy files (the candidate perturbed by a
# relative 1e-7 at most, so both tools pass it with float32's tolerances
# rtol 1.3e-6, atol 1e-5), measured in the same run: wall time and peak RSS
# (GNU time; the median of RUNS runs each, the files already in the page cache
# for both), and the ratios.
#
# Usage: bench/verify_npy.sh [GPUOPT_BINARY]   (default build/src/gpuopt)
# Needs: /usr/bin/python3 with numpy (python3-numpy), GNU time (/usr/bin/time),
# about 3 GB of free memory for numpy's side. RUNS=N changes the run count (5).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/gpuopt}
runs=${RUNS:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

/usr/bin/python3 - "$dir" <<'PY'
import sys
import numpy as np
n = 256 * 2**20 // 4
rng = np.random.default_rng(0)
ref = rng.standard_normal(n, dtype=np.float32)
cand = ref * (1 + rng.uniform(-1e-7, 1e-7, n).astype(np.float32))
np.save(f"{sys.argv[1]}/ref.npy", ref)
np.save(f"{sys.argv[1]}/cand.npy", cand)
PY
size=$(stat -c %s "$dir/ref.npy")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GB RAM"
echo "files: 2 x $((size / 1000000)) MB float32 .npy ($(( (size - 128) / 4 )) elements each)"

# measure NAME CMD...: runs CMD $runs times; prints the median wall time and
# peak RSS, and leaves them in $secs / $mb. A non-zero exit is reported.
measure() {
  local name=$1; shift
  local t=() m=() rc
  for ((i = 0; i < runs; i++)); do
    rc=0
    /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    [ "$rc" -eq 0 ] || { echo "$name: exit $rc"; tail -n 5 "$dir/out" "$dir/err"; exit 1; }
    read -r s kb < <(tail -n 1 "$dir/time")
    t+=("$s"); m+=("$kb")
  done
  secs=$(printf '%s\n' "${t[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
  mb=$(( $(printf '%s\n' "${m[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p") / 1024 ))
  printf "%-44s %7.2f s %7d MB peak RSS   (runs: %s s)\n" "$name" "$secs" "$mb" "${t[*]}"
}

measure "gpuopt verify" "$bin" verify "$dir/ref.npy" "$dir/cand.npy"
g_s=$secs g_mb=$mb
measure "numpy.load + numpy.testing.assert_allclose" /usr/bin/python3 -c '
import sys
import numpy as np
ref, cand = np.load(sys.argv[1]), np.load(sys.argv[2])
np.testing.assert_allclose(cand, ref, rtol=1.3e-6, atol=1e-5)' "$dir/ref.npy" "$dir/cand.npy"
n_s=$secs n_mb=$mb
/usr/bin/python3 - "$g_s" "$n_s" "$g_mb" "$n_mb" <<'PY'
import sys
g, n, gm, nm = map(float, sys.argv[1:])
print(f"ratio: numpy / gpuopt wall time = {n / max(g, 0.005):.1f}x "
      f"(target >= 5x); peak memory {gm:.0f} MB against {nm:.0f} MB")
print(f"gpuopt's peak RSS counts the mapped file pages it holds at once "
      f"(it hands them back as it goes): target < 64 MB beyond the mapped files")
PY
