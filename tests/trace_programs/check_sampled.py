#!/usr/bin/env python3
"""Checks the tracer's record sampling on the GPU machine: the same
launch-heavy program traced as gpuopt trace does by default (which samples
CUPTI's records once launches come faster than sample_launch_rate) and with
--exact (every record), in one call. Both runs must exit 0 and match their records to their calls (a
record whose call's ring entry was reused is not); the sampled run must say
it sampled, count every launch, and
estimate the kernels' number, GPU time and the GPU's busy time within the
tolerance of what the exact run recorded, and its idle time within the
tolerance of its own GPU phase less its busy time (the exact run's idle time
is no measure: recording every record slows the launches, and in a loop of
tiny kernels the GPU waits that much longer; it is printed beside); where it opened windows
(--set sample_window_ms=N) they must keep their kernel records (at least one
for every two launches made while recording); and CUPTI must not refuse to
turn the records on or off.

Usage: check_sampled.py SAMPLED_REPORT.json EXACT_REPORT.json LAUNCHES [--tolerance 0.1]
Prints one line per check, "ok" or "FAIL", and exits 1 if any failed."""
import json
import sys


def main():
    sampled_path, exact_path, launches = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tol = float(sys.argv[sys.argv.index("--tolerance") + 1]) if "--tolerance" in sys.argv else 0.1
    s, e = json.load(open(sampled_path)), json.load(open(exact_path))
    ok = True

    def check(good, what):
        nonlocal ok
        print(f"{'ok  ' if good else 'FAIL'} {what}")
        ok &= bool(good)

    for name, r in (("sampled", s), ("exact", e)):
        x = r["exit"]
        check(x["code"] == 0 and x["signal"] == 0,
              f"the {name} run exited 0 (code {x['code']}, signal {x['signal']})")
        rec = sum(p["records"] for p in r["processes"])
        lost = sum(p["unattributed"] for p in r["processes"])
        print(f"  ({name}: {sum(p.get('untimed', 0) for p in r['processes'])} of {rec} records without valid times, "
              f"{sum(p.get('early', 0) for p in r['processes'])} kernels starting before their launch)")
        check(rec > 0 and lost <= rec / 100,
              f"the {name} run matched its records to calls: {lost} of {rec} not matched (1% allowed)")
    sp = [p.get("sampling", {}) for p in s["processes"]]
    ep = [p.get("sampling", {}) for p in e["processes"]]
    sampled = sum(p.get("sampled_launches", 0) for p in sp)
    recorded = sum(p.get("recorded_launches", 0) for p in sp)
    check(sampled > 0 and 0 < recorded < sampled,
          f"default mode sampled: {recorded} of {sampled} launches made while sampling recorded")
    check(all(not p.get("sampled") for p in ep), "the run with --exact did not sample")
    kept = sum(p.get("recorded_kernels", recorded) for p in sp) if sp else 0
    errors = sum(p.get("toggle_errors", 0) for p in sp)
    if sum(p.get("windows", 0) for p in sp):
        check(kept * 2 >= recorded, f"the windows kept their kernel records: {kept} for {recorded} launches")
    else:  # the default: no windows, the stretch counted at the mean of the kernels recorded before it
        print(f"  (no windows: {kept} kernel records of the {recorded} launches made as the records went off, "
              f"left out of the estimate)")
    check(errors == 0, f"CUPTI turned the records on and off when asked: {errors} refusals")
    toggles = sum(p.get("toggles", 0) for p in sp)
    print(f"  (the sampler switched the records {toggles} times, "
          f"{sum(p.get('toggle_ns', 0) for p in sp) / 1e6:.2f} ms in all, the longest "
          f"{max([p.get('toggle_max_ns', 0) for p in sp] or [0]) / 1e6:.2f} ms)")
    def idle(r):
        return sum(r["budget"]["idle"][k] for k in ("host_wait_ns", "kernel_wait_ns", "other_ns"))
    for what, key in (("launches counted", "launches"), ("kernels (estimated / recorded)", "kernels"),
                      ("kernel time (estimated / recorded)", "kernel_ns"), ("GPU busy", "gpu_busy_ns")):
        a, b = s["budget"][key], e["budget"][key]
        if key == "launches":
            good = a >= launches and b >= launches
            check(good, f"{what}: sampled run {a}, exact run {b}, the program made {launches}+")
            continue
        ratio = a / b if b else float("nan")
        check(b > 0 and abs(ratio - 1) <= tol,
              f"{what}: sampled {a}, exact {b} (ratio {ratio:.3f}, tolerance {tol:.0%})")
    b = s["budget"]
    gaps = b["gpu_phase_ns"] + b.get("warmup_ns", 0) - b["gpu_busy_ns"]
    ratio = idle(s) / gaps if gaps > 0 else float("nan")
    check(gaps > 0 and abs(ratio - 1) <= tol,
          f"GPU idle (estimated / the sampled run's GPU phase less its busy time): {idle(s)} / {gaps} "
          f"(ratio {ratio:.3f}, tolerance {tol:.0%}; the exact run, slower to launch, idled {idle(e)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
