#!/usr/bin/env bash
# Scores a set again from its saved traces, with the gpuopt built here: each
# saved trace is analysed anew (`gpuopt trace show --format json`), the
# ports' verdicts are kept as they were (they need the GPU). For regression
# checks of analysis changes: a set re-scored after fixes made against it
# is not a measure (bench/verdict_eval/README.md).
#   bash bench/verdict_eval/rescore.sh set5 bench/results/h200_verdict_eval_set5_first_trace.tgz [PORTS.tgz]
set -euo pipefail
cd "$(dirname "$0")/../.."
SET=$1 TRACES=$2 PORTS=${3:-}
G=${GPUOPT:-$PWD/build/src/gpuopt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$TRACES"
dir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
if [ -n "$PORTS" ]; then
  mkdir -p "$work/p" && tar -C "$work/p" -xzf "$PORTS"
  rm -rf "$dir/ports" && cp -r "$(find "$work/p" -mindepth 1 -maxdepth 1 -type d | head -1)/ports" "$dir/ports"
fi
for t in "$dir"/traces/*.default.json "$dir"/traces/*.exact.json; do
  case $t in *.report.json) continue ;; esac
  [ -s "$t" ] || continue
  "$G" trace show --format json "$t" >"${t%.json}.report.json" 2>/dev/null || true
done
python3 bench/verdict_eval/score.py "bench/verdict_eval/$SET" "$dir"
