#!/usr/bin/env bash
# gpuopt bench against hyperfine (Debian's package) on the same commands, in
# one run, on this machine. Three checks, each printed with PASS / FAIL:
#
#  1. Overhead on `true`: the harness's own cost per run, from the wall time
#     of N1 and N2 runs of each tool ((T(N2) - T(N1)) / (N2 - N1), so fixed
#     start-up costs cancel), the median of REPEAT alternating measurements;
#     and the time each tool reports for `true` (what its timer adds).
#     gpuopt must be no worse than hyperfine -N (no shell for either).
#  2. A known difference: `sleep 0.022` (baseline) against `sleep 0.020`:
#     gpuopt, with its defaults, must report a speedup of 1.10 +/- 0.02 with
#     a 95% interval that excludes 1 (hyperfine's ratio is shown beside it).
#  3. No false alarms: two identical commands (`sleep 0.02` twice), REPS
#     times with the defaults: `no difference` at least REPS - 1 times.
#
# Usage: bash bench/bench_vs_hyperfine.sh   (from the source root, after
# scripts/setup.sh). Knobs: GPUOPT (default build/src/gpuopt), N1 (200),
# N2 (2000), REPEAT (3), REPS (20). Takes a few minutes. Exit status 1 when a
# check fails. Not a test: timings depend on the machine.
set -uo pipefail
cd "$(dirname "$0")/.."

GPUOPT=${GPUOPT:-build/src/gpuopt}
N1=${N1:-200}
N2=${N2:-2000}
REPEAT=${REPEAT:-3}
REPS=${REPS:-20}

if ! command -v hyperfine >/dev/null; then
  echo "hyperfine is not installed: apt-get install hyperfine" >&2
  exit 2
fi
[ -x "$GPUOPT" ] || { echo "$GPUOPT is missing: run scripts/setup.sh first" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON results" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
verdict() { # verdict OK_EXPRESSION_RESULT(0/1) TEXT
  if [ "$1" -eq 0 ]; then echo "PASS  $2"; else echo "FAIL  $2"; failed=1; fi
}
elapsed() { # elapsed CMD...: wall seconds of the command, its output discarded
  local t0 t1
  t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1
  t1=$EPOCHREALTIME
  python3 -c "print($t1 - $t0)"
}

echo "== machine"
echo "cpu:    $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"
echo "kernel: $(uname -sr); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tools:  $("$GPUOPT" --version), $(hyperfine --version)"
echo

echo "== 1. overhead per run on 'true' ($N1 and $N2 runs, median of $REPEAT)"
for i in $(seq "$REPEAT"); do
  g1=$(elapsed "$GPUOPT" bench --runs "$N1" --warmup 3 true)
  h1=$(elapsed hyperfine -N --runs "$N1" --warmup 3 true)
  g2=$(elapsed "$GPUOPT" bench --runs "$N2" --warmup 3 --export-json "$work/g_true_$i.json" true)
  h2=$(elapsed hyperfine -N --runs "$N2" --warmup 3 --export-json "$work/h_true_$i.json" true)
  echo "$g1 $g2 $h1 $h2" >>"$work/overhead"
done
python3 - "$work" "$N1" "$N2" "$REPEAT" <<'EOF' >"$work/overhead.out"
import json, statistics, sys
work, n1, n2, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [list(map(float, l.split())) for l in open(f"{work}/overhead")]
g = statistics.median((r[1] - r[0]) / (n2 - n1) for r in rows)
h = statistics.median((r[3] - r[2]) / (n2 - n1) for r in rows)
gm = statistics.median(json.load(open(f"{work}/g_true_{i}.json"))["groups"][0]["commands"][0]
                       ["stats"]["wall_s"]["median"] for i in range(1, repeat + 1))
hm = statistics.median(json.load(open(f"{work}/h_true_{i}.json"))["results"][0]["median"]
                       for i in range(1, repeat + 1))
print(f"harness wall per run:  gpuopt {g * 1e6:7.1f} us   hyperfine -N {h * 1e6:7.1f} us")
print(f"reported median 'true': gpuopt {gm * 1e6:7.1f} us   hyperfine -N {hm * 1e6:7.1f} us")
print(int(g <= h and gm <= hm * 1.05))
EOF
head -2 "$work/overhead.out"
ok=$(tail -1 "$work/overhead.out")
verdict $((1 - ok)) "gpuopt's overhead per run is no worse than hyperfine's (wall per run, and the time it reports for 'true' within 5%)"
echo

echo "== 2. 'sleep 0.022' (baseline) vs 'sleep 0.020': a known 10% difference"
"$GPUOPT" bench --export-json "$work/pair.json" 'sleep 0.022' 'sleep 0.020' >"$work/pair.txt"
head -1 "$work/pair.txt"
hyperfine -N --warmup 1 --export-json "$work/h_pair.json" 'sleep 0.022' 'sleep 0.020' >/dev/null 2>&1
python3 - "$work" <<'EOF' >"$work/pair.out"
import json, sys
work = sys.argv[1]
d = json.load(open(f"{work}/pair.json"))
c = d["groups"][0]["comparisons"][0]
g = d["groups"][0]
h = json.load(open(f"{work}/h_pair.json"))["results"]
ratio = h[0]["mean"] / h[1]["mean"]
runs = g["rounds"]
print(f"gpuopt: speedup {c['speedup']:.4f}, 95% CI {c['ci95'][0]:.4f}-{c['ci95'][1]:.4f}, "
      f"verdict {c['verdict']}, {runs} paired rounds in {g['elapsed_s']:.1f} s")
print(f"hyperfine: ratio of means {ratio:.4f} (no interval), {len(h[0]['times'])} + "
      f"{len(h[1]['times'])} runs, not interleaved")
ok = 1.08 <= c["speedup"] <= 1.12 and c["ci95"][0] > 1
print(int(ok))
EOF
head -2 "$work/pair.out"
ok=$(tail -1 "$work/pair.out")
verdict $((1 - ok)) "a 10% +/- 2% difference (speedup 1.08 to 1.12) with a 95% interval that excludes 1"
echo

echo "== 3. identical commands ('sleep 0.02' twice), $REPS repetitions with the defaults"
same=0
for i in $(seq "$REPS"); do
  "$GPUOPT" bench --export-json "$work/same_$i.json" 'sleep 0.02' 'sleep 0.02' >/dev/null
  line=$(python3 -c "
import json, sys
c = json.load(open('$work/same_$i.json'))['groups'][0]['comparisons'][0]
print(c['verdict'], '%.4f [%.4f, %.4f]' % (c['speedup'], *c['ci95']))")
  echo "  $i: $line"
  case "$line" in "no difference"*) same=$((same + 1)) ;; esac
done
echo "no difference in $same of $REPS"
verdict $((same >= REPS - 1 ? 0 : 1)) "identical commands: 'no difference' at least $((REPS - 1)) times in $REPS"
echo
[ "$failed" -eq 0 ] && echo "all checks passed" || echo "some checks failed"
exit "$failed"
