#!/usr/bin/env bash
# Run every test: install and build (scripts/setup.sh), then the unit,
# fuzz-seed and end-to-end suites on the release build and again under
# AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included),
# then each libFuzzer target for FUZZ_SECONDS (default 60) when clang is here.
# Ends with one line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
tally() { # tally LOG: add meson's Ok/Fail counts
  local ok fail
  ok=$(grep -E '^Ok:' "$1" | awk '{print $2}' | tail -1)
  fail=$(grep -E '^(Fail|Timeout|Unexpected Pass):' "$1" | awk '{s+=$NF} END {print s+0}')
  passed=$((passed + ${ok:-0}))
  failed=$((failed + ${fail:-0}))
  [ -n "$ok" ] || failed=$((failed + 1))
}
pytally() { # pytally LOG: add pytest's passed/failed counts
  local line p f
  line=$(grep -E '^=*.*[0-9]+ (passed|failed)' "$1" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | awk '{print $1}')
  f=$(grep -oE '[0-9]+ (failed|error)' <<<"$line" | awk '{s+=$1} END {print s+0}')
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  [ -n "$p" ] || [ "${f:-0}" -gt 0 ] || failed=$((failed + 1))
}
suite() { # suite BUILD_DIR: unit and fuzz-seed tests by meson, end-to-end by pytest
  meson test -C "$1" --suite unit --suite fuzz --print-errorlogs 2>&1 | tee "$log"
  tally "$log"
  GPUOPT="$1/src/gpuopt" pytest-3 -p no:cacheprovider -q tests/e2e 2>&1 | tee "$log"
  pytally "$log"
}

log=$(mktemp)
echo "== release build"
suite build

echo "== sanitizer build (ASan + UBSan + LSan)"
[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false </dev/null >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
meson compile -C build-asan </dev/null >/dev/null
suite build-asan

if command -v clang >/dev/null; then
  echo "== libFuzzer, ${FUZZ_SECONDS:-60} s per target"
  [ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzzing=true \
      -Db_sanitize=address,undefined -Db_lundef=false </dev/null >/dev/null
  if meson compile -C build-fuzz </dev/null >/dev/null; then
    for exe in build-fuzz/tests/fuzz/fuzz_*; do
      [ -f "$exe" ] && [ -x "$exe" ] || continue
      t=${exe##*/fuzz_}
      work=$(mktemp -d)
      # The Python targets read at most 512 bytes of an input (MAX_INPUT) and
      # cover much code per input, where libFuzzer's entropic bookkeeping
      # would take half the time: they run with the plain schedule.
      flags=(-max_len=65536) seeds=()
      if [ "$t" = pyscan ] || [ "$t" = pyparse ]; then
        flags=(-max_len=512 -entropic=0) seeds=(examples)
      fi
      [ "$t" = trace ] && seeds=(tests/e2e/fixtures/trace)
      if "$exe" -max_total_time="${FUZZ_SECONDS:-60}" "${flags[@]}" \
           -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
           "$work" "tests/fuzz/corpus/$t" "${seeds[@]}" >"$log" 2>&1; then
        echo "fuzz $t: ok ($(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}') runs, $(grep -E 'stat::average_exec_per_sec' "$log" | awk '{print $2}')/s)"
        passed=$((passed + 1))
      else
        echo "fuzz $t: FAILED"; tail -40 "$log"; failed=$((failed + 1))
      fi
      rm -rf "$work"
    done
  else
    echo "fuzz build: FAILED"; failed=$((failed + 1))
  fi
fi
rm -f "$log"
# What scripts/setup.sh left out for want of disk, and so what was skipped.
if [ -s .venv/.gpuopt-skipped ]; then
  sed 's/^/not installed (the tests that use it were skipped): /' .venv/.gpuopt-skipped
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
