#!/usr/bin/env python3
"""How much gpuopt trace slows a program down, against the same program run
plainly and under torch.profiler, in one run on the GPU machine.

Workloads (each timed inside its own process, median of --reps repetitions
after a warm-up, synchronized, on time.perf_counter):
  cupy_launch   20,000 tiny kernels (x += 1 on 1024 floats), CuPy
  torch_launch  20,000 tiny kernels (x.add_(1)), PyTorch
  matmul        a compute-bound loop: 10 float32 8192x8192 products, CuPy
  roundtrip     2,000 iterations of an update and a device->host copy of one value, CuPy
  c_launch_runtime, c_launch_driver
                20,000 empty kernels from C (bench/launch_cost.cu, --launch-cost
                PATH): cudaLaunchKernel or cuLaunchKernel, no interpreter; the
                host time of each 1,000 launches is kept too ("batch_us" in --json),
                and for each traced process whether its sampling windows kept
                their kernel records ("sampling"); the summary sets the two side
                by side (are launches cheap between windows only where the
                windows lost their records?)
Modes, each in its own process: plain; trace (gpuopt trace's default: the
records of launches faster than 20,000 a second sampled, 10 ms in every 200,
the rest estimated); trace_exact (--exact: every record); torch_profiler
(torch.profiler.profile with CPU and CUDA activities), measured in --rounds
interleaved rounds in a shuffled order; and once, what the parts of gpuopt's
tracer cost: trace_sample_5ms / _100ms / _sparse / _rare (windows of 5 ms, a
period of 100 ms, 10 ms a second, 1 ms a second), trace_one_window (one window
per fast stretch, then no records), trace_timeline (--timeline),
and with every record (--exact): trace_kernels_only (only kernel, copy and
memset records), trace_callbacks_only (GPUOPT_TRACE_KINDS=none: API callbacks
and Python lines, no CUPTI activity records), trace_activity_only
(GPUOPT_TRACE_CALLBACKS=0), torch_profiler_stack (with_stack=True).

Targets (issue 13): trace <= 1.15x plain on the launch loops, <= 1.02x on
the compute-bound loop. Prints a table and the ratios (of the medians, and
the median of each round's own ratio to plain); --json FILE keeps them,
rewritten after every round, and a SIGTERM (timeout(1)) still prints and
saves the rounds measured. A mode named in --modes is measured on every
workload in every round (torch.profiler's modes not on the C ones).

Diagnostic modes of the tracer's parts for torch_launch also: trace_driver_api_only
(GPUOPT_TRACE_DIAG=runtime_api=0), trace_no_python_lines (python_lines=0),
trace_nothing_on (injected and subscribed, no callback or record enabled).
CUPTI's own settings (GPUOPT_TRACE_DIAG, named in --modes to be measured):
trace_zeroed_buffers (buffers handed over already zero), trace_host_pinned
(records kept in pinned host memory), trace_shared_buffer (no per-thread
buffers), trace_device_buffer_64mb, trace_buffer_64kb.

Usage: trace_overhead.py --gpuopt PATH [--reps 5] [--rounds 3] [--json FILE]
                         [--workloads cupy_launch,torch_launch] [--diagnose-every-round]
       trace_overhead.py --workload NAME [--profile plain|torch|torch_stack]   (one process)
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time

LAUNCHES = 20000
CPUS = None
LAUNCH_COST = None  # bench/launch_cost.cu built (--launch-cost)
BATCHES = {}  # workload -> mode -> [per-process batch times, us] (the C workloads)
# workload -> mode -> [per traced process of the C workloads: its report's "sampling"]
SAMPLING = {}


def run_workload(name, reps, profile):
    if name.startswith("torch") or profile != "plain":
        import torch
    if name == "torch_launch":
        x = torch.ones(1024, device="cuda")

        def body():
            for _ in range(LAUNCHES):
                x.add_(1.0)
            torch.cuda.synchronize()
    else:
        import cupy as cp
        sync = cp.cuda.Device().synchronize
        if name == "cupy_launch":
            x = cp.ones(1024, dtype=cp.float32)

            def body():
                nonlocal x
                for _ in range(LAUNCHES):
                    x += 1.0
                sync()
        elif name == "matmul":
            a = cp.random.rand(8192, 8192, dtype=cp.float32)

            def body():
                for _ in range(10):
                    c = a @ a
                sync()
        elif name == "roundtrip":
            v = cp.random.rand(1 << 20)

            def body():
                nonlocal v
                for _ in range(2000):
                    v = v * 0.999 + 0.001
                    if float(v[0]) < -1:
                        break
        else:
            raise SystemExit(f"unknown workload {name}")
    body()  # warm-up: modules, kernels, handles, memory pool
    times = []
    if profile == "plain":
        for _ in range(reps):
            t0 = time.perf_counter()
            body()
            times.append(time.perf_counter() - t0)
    else:
        from torch.profiler import ProfilerActivity, profile as tprofile
        with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                      with_stack=profile == "torch_stack"):
            for _ in range(reps):
                t0 = time.perf_counter()
                body()
                times.append(time.perf_counter() - t0)
    print(json.dumps({"workload": name, "times_s": times}), flush=True)


MODES = {
    "plain": ([], {}, "plain"),
    # gpuopt trace's default: fast launches' records off until they slow down (session 12)
    "trace": (["TRACE"], {}, "plain"),
    # every record (--exact): the default before session 10
    "trace_exact": (["TRACE", "--exact"], {}, "plain"),
    "torch_profiler": ([], {}, "torch"),
    # windows of records in the fast stretch: 10 ms in every 200 (the default of sessions 10-11)
    "trace_windows": (["TRACE", "--set", "sample_window_ms=10"], {}, "plain"),
    "trace_sample_5ms": (["TRACE", "--set", "sample_window_ms=5"], {}, "plain"),
    "trace_sample_100ms": (["TRACE", "--set", "sample_window_ms=10", "--set", "sample_period_ms=100"], {}, "plain"),
    "trace_sample_sparse": (["TRACE", "--set", "sample_window_ms=10", "--set", "sample_period_ms=1000"], {},
                            "plain"),
    "trace_sample_rare": (["TRACE", "--set", "sample_window_ms=1", "--set", "sample_period_ms=1000"], {}, "plain"),
    # one window per fast stretch (90 ms into it), then the callbacks alone: is a
    # process whose records were on once as cheap as one that never had them?
    # (no: session 12, bench/results/README.md)
    "trace_one_window": (["TRACE", "--set", "sample_window_ms=10", "--set", "sample_period_ms=3600000"], {},
                         "plain"),
    "trace_timeline": (["TRACE", "--timeline"], {}, "plain"),
    # what the tracer's parts cost, each with every record (--exact)
    "trace_kernels_only": (["TRACE", "--exact"], {"GPUOPT_TRACE_KINDS": "kernel,memcpy,memset"}, "plain"),
    "trace_callbacks_only": (["TRACE", "--exact"], {"GPUOPT_TRACE_KINDS": "none"}, "plain"),
    "trace_activity_only": (["TRACE", "--exact"], {"GPUOPT_TRACE_CALLBACKS": "0"}, "plain"),
    "torch_profiler_stack": ([], {}, "torch_stack"),
    "trace_driver_api_only": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "runtime_api=0"}, "plain"),
    "trace_no_python_lines": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "python_lines=0"}, "plain"),
    "trace_nothing_on": (["TRACE", "--exact"], {"GPUOPT_TRACE_CALLBACKS": "0", "GPUOPT_TRACE_KINDS": "none"},
                         "plain"),
    # the API callbacks with one kind of record
    "trace_cb_kernel": (["TRACE", "--exact"], {"GPUOPT_TRACE_KINDS": "kernel"}, "plain"),
    "trace_cb_memory": (["TRACE", "--exact"], {"GPUOPT_TRACE_KINDS": "kernel,memory"}, "plain"),
    "trace_cb_sync": (["TRACE", "--exact"], {"GPUOPT_TRACE_KINDS": "kernel,sync"}, "plain"),
    # CUPTI's own settings (the tracer's diag_cupti): where the per-launch cost might go
    "trace_zeroed_buffers": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "zeroed_buffers=1"}, "plain"),
    "trace_host_pinned": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "host_pinned=1"}, "plain"),
    "trace_shared_buffer": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "per_thread_buffers=0"}, "plain"),
    "trace_device_buffer_64mb": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "device_buffer_mb=64"}, "plain"),
    "trace_buffer_64kb": (["TRACE", "--exact"], {"GPUOPT_TRACE_DIAG": "buffer_kb=64"}, "plain"),
}
# one kind of CUPTI activity record at a time, no callbacks
for _kind in ("kernel", "memcpy", "memset", "sync", "memory", "overhead"):
    MODES[f"trace_records_{_kind}"] = (["TRACE", "--exact"],
                                       {"GPUOPT_TRACE_CALLBACKS": "0", "GPUOPT_TRACE_KINDS": _kind}, "plain")
MAIN = ["plain", "trace", "trace_exact", "torch_profiler"]
# workload -> (modes measured in every round, modes measured once)
PLAN = {
    "cupy_launch": (MAIN, ["trace_sample_5ms", "trace_sample_sparse", "trace_nothing_on", "trace_timeline",
                           "trace_kernels_only", "trace_callbacks_only", "trace_activity_only",
                           "trace_records_kernel"]),
    "torch_launch": (MAIN, ["trace_sample_5ms", "trace_sample_sparse", "trace_timeline", "trace_kernels_only",
                            "trace_callbacks_only", "trace_activity_only", "trace_driver_api_only",
                            "trace_no_python_lines", "trace_nothing_on", "torch_profiler_stack",
                            *(f"trace_records_{k}" for k in ("kernel", "memcpy", "memset", "sync", "memory",
                                                             "overhead"))]),
    "matmul": (MAIN, []),
    "roundtrip": (MAIN, ["trace_kernels_only"]),
    # without an interpreter: what CUPTI and the tracer cost per launch
    "c_launch_runtime": (["plain", "trace", "trace_exact"],
                         ["trace_callbacks_only", "trace_activity_only", "trace_records_kernel",
                          "trace_nothing_on"]),
    "c_launch_driver": (["plain", "trace", "trace_exact"],
                        ["trace_callbacks_only", "trace_activity_only", "trace_records_kernel",
                         "trace_nothing_on"]),
}
C_WORKLOADS = ("c_launch_runtime", "c_launch_driver")


def measure(gpuopt, workload, mode, reps):
    pre, env_extra, profile = MODES[mode]
    if workload in C_WORKLOADS:
        if profile != "plain":
            return None  # torch.profiler needs Python
        cmd = [LAUNCH_COST, workload.rsplit("_", 1)[1], str(reps)]
    else:
        cmd = [sys.executable, os.path.abspath(__file__), "--workload", workload, "--reps", str(reps),
               "--profile", profile]
    if pre:
        cmd = [gpuopt, "trace", "-q", "--format", "json", *pre[1:], "--", *cmd]
    if CPUS:
        cmd = ["taskset", "-c", CPUS, *cmd]
    env = dict(os.environ, **env_extra)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    for line in (p.stdout + "\n" + p.stderr).splitlines():
        if line.startswith('{"workload"'):
            got = json.loads(line)
            if "batch_us" in got:
                BATCHES.setdefault(workload, {}).setdefault(mode, []).append(got["batch_us"])
                if pre:
                    SAMPLING.setdefault(workload, {}).setdefault(mode, []).append(sampling_of(p.stdout))
            return statistics.median(got["times_s"])
    # under gpuopt trace --format json, stdout is the report (the program's exit and signal)
    sys.stderr.write(f"{workload}/{mode} failed (exit {p.returncode}):\n{p.stderr[-3000:]}\n"
                     f"stdout: {p.stdout[-1500:]}\n")
    return None


def sampling_of(stdout):
    """The traced process's "sampling" from gpuopt trace's JSON report (the
    lines from one that is "{" to the end of stdout), or None."""
    lines = stdout.splitlines()
    try:
        doc = json.loads("\n".join(lines[lines.index("{"):]))
        return doc["processes"][0]["sampling"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def batch_levels():
    """For the C workloads: per traced process, whether its windows kept
    their kernel records, beside what its batches of 1,000 launches cost
    against plain's (median of plain's per-process medians): the median batch
    and the cheapest tenth. If launches get cheap between windows only in
    processes whose windows lost their records, no switching of CUPTI's
    records on and off keeps both the records and the launches cheap."""
    for w, modes in SAMPLING.items():
        plain = [statistics.median(b) for b in BATCHES.get(w, {}).get("plain", []) if b]
        if not plain:
            continue
        base = statistics.median(plain)
        print(f"\n{w}: batches of 1,000 launches per traced process, against plain's median "
              f"{base:.0f} us (cheap between windows and records kept: both are needed):")
        for m, procs in modes.items():
            for i, (smp, batches) in enumerate(zip(procs, BATCHES[w][m])):
                if not batches:
                    continue
                b = sorted(batches)
                tenth = b[: max(1, len(b) // 10)]
                if not smp or not smp.get("recorded_launches"):
                    kept = "no sampling"
                else:
                    kept = ("records kept" if 2 * smp["recorded_kernels"] >= smp["recorded_launches"]
                            else "records LOST") + (f" ({smp['recorded_kernels']} kernels of "
                                                    f"{smp['recorded_launches']} launches in windows)")
                print(f"  {m:22s} process {i + 1}: median {statistics.median(b) / base:.3f}x, "
                      f"cheapest tenth {statistics.median(tenth) / base:.3f}x; {kept}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload")
    ap.add_argument("--profile", default="plain")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--gpuopt")
    ap.add_argument("--json")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workloads", help="comma-separated subset of " + ",".join(PLAN))
    ap.add_argument("--modes", help="comma-separated subset of the modes to measure (plain is always measured)")
    ap.add_argument("--cpus", help="run every process on these CPUs (taskset -c), so that where the "
                    "scheduler puts a process does not add to the difference between modes")
    ap.add_argument("--launch-cost", help="bench/launch_cost.cu built, for the c_launch_* workloads "
                    "(default: launch_cost beside --gpuopt)")
    ap.add_argument("--diagnose-every-round", action="store_true",
                    help="measure the diagnostic modes in every round, not only the first")
    a = ap.parse_args()
    if a.workload:
        run_workload(a.workload, a.reps, a.profile)
        return 0
    if not a.gpuopt:
        ap.error("--gpuopt PATH is needed")
    global CPUS, LAUNCH_COST
    CPUS = a.cpus
    LAUNCH_COST = a.launch_cost or os.path.join(os.path.dirname(os.path.abspath(a.gpuopt)), "launch_cost")
    # Rounds: every workload's main modes once per round, in a shuffled order
    # (the machine drifts: GPU clocks, CPU frequency), then the diagnostic
    # modes once. A mode's time is the median over its rounds of each
    # process's median repetition.
    rng = random.Random(a.seed)
    plan = PLAN
    if a.workloads:
        unknown = set(a.workloads.split(",")) - set(PLAN)
        if unknown:
            ap.error(f"unknown workloads: {', '.join(sorted(unknown))}")
        plan = {w: PLAN[w] for w in a.workloads.split(",")}
    if a.modes:
        # A diagnostic mode named here is measured in every round, like the main ones.
        keep = set(a.modes.split(",")) | {"plain"}
        unknown = keep - set(MODES)
        if unknown:
            ap.error(f"unknown modes: {', '.join(sorted(unknown))}")
        named = ["plain"] + [m for m in a.modes.split(",") if m != "plain"]
        plan = {w: ([m for m in named if not (w in C_WORKLOADS and MODES[m][2] != "plain")], [])
                for w in plan}
    samples, by_round, completed = {}, {}, 0

    def on_term(sig, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)  # timeout(1): still print and save what was measured
    try:
        for rnd in range(a.rounds):
            order = [(w, m) for w, (main, _) in plan.items() for m in main]
            if a.diagnose_every_round:
                order += [(w, m) for w, (_, diag) in plan.items() for m in diag]
            rng.shuffle(order)
            if rnd == 0 and not a.diagnose_every_round:
                order += [(w, m) for w, (_, diag) in plan.items() for m in diag]
            for w, m in order:
                t = measure(a.gpuopt, w, m, a.reps)
                if t:
                    samples.setdefault(w, {}).setdefault(m, []).append(t)
                    by_round.setdefault(w, {}).setdefault(m, {})[rnd] = t
                print(f"  round {rnd + 1} {w:13s} {m:22s} " + (f"{t * 1e3:9.1f} ms" if t else "   failed"),
                      flush=True)
            completed = rnd + 1
            if a.json:
                save(a, samples, by_round, completed)
    except KeyboardInterrupt:
        print("\n(stopped: the summary covers the rounds measured so far)", flush=True)
    summary(samples, by_round)
    batch_levels()
    if a.json:
        save(a, samples, by_round, completed)
    return 0


def paired(by_round, w, m):
    """Median over the rounds of the mode's time / plain's time in the same round
    (the machine's drift from round to round cancels); None without a common round."""
    r = by_round.get(w, {})
    common = set(r.get(m, {})) & set(r.get("plain", {}))
    return statistics.median(r[m][k] / r["plain"][k] for k in common) if common else None


def ratios_of(samples, by_round):
    results = {w: {m: statistics.median(v) for m, v in ms.items()} for w, ms in samples.items()}
    ratios, pairs = {}, {}
    for w, r in results.items():
        base = r.get("plain")
        if base:
            ratios[w] = {m: t / base for m, t in r.items()}
            pairs[w] = {m: paired(by_round, w, m) for m in r if m != "plain"}
    return results, ratios, pairs


def summary(samples, by_round):
    results, ratios, pairs = ratios_of(samples, by_round)
    print("\nOverhead (median loop time, ratio to plain [median of the per-round ratios]; "
          "trace vs torch.profiler):")
    targets = {"cupy_launch": 1.15, "torch_launch": 1.15, "matmul": 1.02}
    for w, row in ratios.items():
        r = results[w]
        tp = r.get("torch_profiler")
        vs = f"; trace / torch.profiler {r['trace'] / tp:.3f}" if r.get("trace") and tp else ""
        target = targets.get(w)
        verdict = ""
        if target and row.get("trace"):
            verdict = f"  target <= {target:.2f}: {'met' if row['trace'] <= target else 'MISSED'}"
        parts = ", ".join(f"{m} {v:.3f}" + (f" [{pairs[w][m]:.3f}]" if pairs[w].get(m) else "")
                          for m, v in row.items() if m != "plain")
        n = len(samples[w]["plain"])
        print(f"  {w:13s} plain {r['plain'] * 1e3:.1f} ms ({n} rounds): {parts}{vs}{verdict}")


def save(a, samples, by_round, done):
    """The numbers so far, written whole (a temporary file renamed over the old one)."""
    results, ratios, pairs = ratios_of(samples, by_round)
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"median_s": results, "samples_s": samples, "ratio_to_plain": ratios,
                   "paired_ratio_to_plain": pairs, "launches": LAUNCHES, "rounds": a.rounds,
                   "rounds_done": done, "reps": a.reps, "batch_us": BATCHES, "sampling": SAMPLING}, f, indent=1)
    os.replace(tmp, a.json)


if __name__ == "__main__":
    sys.exit(main())
