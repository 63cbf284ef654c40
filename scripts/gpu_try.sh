#!/usr/bin/env bash
# gpuopt try on the GPU machine, over the example projects of examples/try
# (a NumPy baseline each, with GPU twins and flawed ports), and their
# reports. Part of scripts/gpu_checks.sh; alone:
#   OUT=/tmp/out bash scripts/gpu_try.sh
# Needs the device bundle (scripts/device_bundle.sh). Writes under $OUT:
#   try_examples.log   what each try printed
#   try_results.tgz    each project's results directory (JSON, logs,
#                      report.html, report.md; the run directories left out)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_try}
mkdir -p "$OUT"
G=$PWD/build-device/bundle/gpuopt
work=$(mktemp -d)
export XDG_CACHE_HOME=$work/cache
{
echo "== gpuopt try on the examples ($(date -u +%FT%TZ))"
"$G" --version
python3 -c 'import sys, numpy, cupy; print(sys.version.split()[0], "numpy", numpy.__version__, "cupy", cupy.__version__)'
for proj in diffusion:gpuopt.toml diffusion:small.toml spectra:gpuopt.toml; do
  name=${proj%%:*} contract=${proj##*:}
  [ -d "$work/$name" ] || cp -r "examples/try/$name" "$work/$name"
  echo
  echo "== $name ($contract)"
  (cd "$work/$name" && "$G" try --contract "$contract" --fresh)
  echo "try exit: $?"
  res=$(cd "$work/$name" && /usr/bin/env python3 -c "import tomllib; print(tomllib.load(open('$contract','rb')).get('results', 'gpuopt-try'))")
  (cd "$work/$name" && "$G" report "$res" && "$G" report -f markdown "$res")
done
} 2>&1 | tee "$OUT/try_examples.log"
# the results, without the run directories (they hold every run's outputs)
(cd "$work" && tar czf "$OUT/try_results.tgz" --exclude='*/runs' --exclude=cache diffusion/gpuopt-try \
    diffusion/gpuopt-try-small spectra/gpuopt-try 2>/dev/null)
ls -la "$OUT"
