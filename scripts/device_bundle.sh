#!/usr/bin/env bash
# Build a gpuopt that runs on the GPU machine (Ubuntu 24.04, no -dev
# packages there): a release build whose binary looks for its shared
# libraries next to itself ($ORIGIN/lib), with the non-glibc ones copied in.
# Output: build-device/ (ignored by git), used by scripts/gpu_checks.sh;
# the bundle also carries gpuopt trace's tracer library.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
[ -f build-device/build.ninja ] || meson setup build-device --buildtype=release \
    -Dc_link_args="-Wl,-rpath,\$ORIGIN/lib" </dev/null >/dev/null
meson compile -C build-device </dev/null >/dev/null
mkdir -p build-device/bundle/lib
cp build-device/src/gpuopt build-device/bundle/
# gpuopt trace's tracer, found beside the binary (needs only libc).
[ -f build-device/src/trace/libgpuopt_trace.so ] && cp build-device/src/trace/libgpuopt_trace.so build-device/bundle/
# bench/trace_overhead.py's C workloads (what a launch costs without Python).
command -v nvcc >/dev/null &&
  nvcc -O2 -arch=sm_90 -o build-device/bundle/launch_cost bench/launch_cost.cu -lcuda
for lib in libjansson.so.4 libtree-sitter.so.0 libxxhash.so.0 libz.so.1; do
  path=$(ldd build-device/src/gpuopt | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] && cp -L "$path" build-device/bundle/lib/
done
ldd build-device/bundle/gpuopt | grep -E "not found" && exit 1
echo "bundle: build-device/bundle ($(du -sh build-device/bundle | cut -f1))"
