#!/usr/bin/env python3
"""Time the copies `gpuopt fit` measures with CuPy and CUDA events too, in
the same run, and print gpuopt / CuPy per copy kind and size.

Usage: python3 bench/fit_vs_cupy.py --gpuopt PATH [--rounds N] [--fresh-process [--control]] [--out RESULT.json]

--fresh-process times each round's CuPy copies in a new Python process, as
`gpuopt fit` runs in its own: bench/pageable_probe.py found pageable rates
to differ more between processes than between methods.

Each of N rounds (default 3) runs `gpuopt fit --refresh --no-peers --format
json` and then the same copies through CuPy, so that the two alternate and
drift in the machine (pageable copies on a VM move by 10-20% between runs)
falls on both; per copy the medians over the rounds are compared. For every
measured size of host->device and device->host, pinned and pageable, and for
the device-to-device copy, this runs the same number of copies per trial
(the `reps` gpuopt used), one warm-up and the median of as many trials,
between two CUDA events on a CuPy stream: cupy.cuda.runtime.memcpyAsync from
a pinned buffer (cupyx.empty_pinned) or a NumPy array, into a CuPy array. The
difference in method: gpuopt queues its pinned and device copies behind a
spin kernel, so their enqueue cost stays out of the events; CuPy's events see
it, which matters only for copies of a few microseconds. First-touch copies
are the same copies fit makes: one copy between two CUDA events, from a new
NumPy array the CPU has just written (host to device) or into a new one
never touched (device to host); and, not checked (a program's whole call:
CuPy's allocation and its own way of copying), as a program makes them:
cupy.asarray of a new NumPy array and cupy.asnumpy into a new one, wall
clock, synchronized.

Beside the ratio of the medians: the median of each round's own ratio
(gpuopt and CuPy ran back to back, so drift of the machine between rounds
cancels), and how far each tool's rate moved over the rounds (max / min - 1),
which bounds how exactly the two can agree on that machine.

Pageable buffers are NumPy arrays, which NumPy maps with transparent huge
pages asked for, as gpuopt maps its own. Whether Linux gave them is printed
per round and process (the share of each buffer in huge pages, from
/proc/self/smaps; gpuopt fit records its own in its ceilings), so that a
slow process can be told apart from one whose buffer got 4 KiB pages.

--control (with --fresh-process) times the same copies with CuPy a second time
in each round, in a third process, and compares that CuPy with the first as
gpuopt is compared with it (an A/A test): where two CuPy processes of the same
code do not agree to 10%, the machine does not repeat its copies to 10%, and
gpuopt's ratio at that size says as much about the machine as about gpuopt.

The check: at sizes of 1 MiB and more, each rate within 10% of CuPy's, by
the median of the rounds' own ratios (gpuopt and CuPy back to back, so that
the VM's drift from round to round, which moves pageable copies by 20-50%,
falls on both; the ratio of the two medians is printed beside). The last
line says how many sizes pass and which tool measured higher; with
--control, a line more says how many pass CuPy against itself. Then, per
kind of memory, the geometric mean of the paired ratios (a bias) and their
root mean square (bias and noise), for gpuopt against CuPy and for CuPy
against itself: where the machine does not repeat its copies to 10%, these
say whether gpuopt strays from CuPy further than CuPy strays from itself.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import cupy as cp
import cupyx

# labels of the first-touch rows: the same copy fit makes, and CuPy's own call (unchecked)
FIRST, FIRST_PROGRAM = "first touch ", "first touch, cupy.as* "
KIND = {"h2d_pinned": (1, True), "d2h_pinned": (2, True), "h2d_pageable": (1, False),
        "d2h_pageable": (2, False)}


def huge_share(addr, n):
    """The share of [addr, addr + n) in transparent huge pages, from
    /proc/self/smaps (AnonHugePages of each mapping that overlaps it, in
    proportion to the overlap), as gpuopt fit records its own buffers'; None
    when it cannot be read."""
    try:
        text = open("/proc/self/smaps").read()
    except OSError:
        return None
    huge, lo, hi, cur = 0.0, addr, addr + n, None
    for line in text.splitlines():
        head = line.split(" ", 1)[0]
        if "-" in head and ":" not in head:
            try:
                a, b = (int(x, 16) for x in head.split("-"))
            except ValueError:
                continue
            cur = (a, b) if a < hi and b > lo else None
        elif cur and line.startswith("AnonHugePages:"):
            a, b = cur
            huge += int(line.split()[1]) * 1024 * (min(b, hi) - max(a, lo)) / (b - a)
    return min(1.0, huge / n)


def events_time(stream, fn, reps):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record(stream)
    for _ in range(reps):
        fn()
    stop.record(stream)
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3


def median_trials(stream, fn, reps, trials):
    events_time(stream, fn, reps)  # warm-up
    t = [events_time(stream, fn, reps) for _ in range(trials)]
    return statistics.median(t) / reps, statistics.pstdev(t) / statistics.mean(t)


def cupy_round(c, stream, bufs, huge=None):
    """One pass of CuPy over the copies of ceilings c: {(kind, bytes): (gbps, cv)}.
    huge (a dict), when given, gets the shares of NumPy's buffers in huge pages:
    "pageable" (the reused one), "first_touch_h2d" / "_d2h" (median over trials)."""
    dev, dev2, pinned, pageable = bufs
    out = {}
    if huge is not None:
        huge["pageable"] = huge_share(pageable.ctypes.data, pageable.nbytes)
    for key, (kind, is_pinned) in KIND.items():
        host = pinned if is_pinned else pageable
        for p in c["transfers"][key]:
            n, reps, trials = p["bytes"], p["reps"], p["trials"]
            if kind == 1:
                fn = lambda: cp.cuda.runtime.memcpyAsync(dev.data.ptr, host.ctypes.data, n, 1, stream.ptr)
            else:
                fn = lambda: cp.cuda.runtime.memcpyAsync(host.ctypes.data, dev.data.ptr, n, 2, stream.ptr)
            sec, cv = median_trials(stream, fn, reps, trials)
            out[(key, n)] = (n / sec / 1e9, cv)
    d2d = c.get("d2d")
    if d2d:
        n, reps = d2d["bytes"], d2d["reps"]
        fn = lambda: cp.cuda.runtime.memcpyAsync(dev2.data.ptr, dev.data.ptr, n, 3, stream.ptr)
        sec, cv = median_trials(stream, fn, reps, d2d["trials"])
        out[("d2d (read+write)", n)] = (2 * n / sec / 1e9, cv)
    for key, direction in (("h2d_pageable", 0), ("d2h_pageable", 1)):
        ft = (c.get("first_touch") or {}).get(key)
        if not ft:
            continue
        n, same, program, shares = ft["bytes"], [], [], []
        for _ in range(ft["trials"]):
            x = np.empty(n, dtype=np.uint8)
            if direction == 0:
                x.fill(0x42)
                fn = lambda: cp.cuda.runtime.memcpyAsync(dev.data.ptr, x.ctypes.data, n, 1, stream.ptr)
            else:
                fn = lambda: cp.cuda.runtime.memcpyAsync(x.ctypes.data, dev.data.ptr, n, 2, stream.ptr)
            same.append(events_time(stream, fn, 1))
            shares.append(huge_share(x.ctypes.data, n))
            del x
        for _ in range(ft["trials"]):
            if direction == 0:
                x = np.empty(n, dtype=np.uint8)
                x.fill(0x42)
                t0 = time.perf_counter()
                y = cp.asarray(x)
                cp.cuda.runtime.deviceSynchronize()
                program.append(time.perf_counter() - t0)
                del y
            else:
                t0 = time.perf_counter()
                x = cp.asnumpy(dev[:n])
                program.append(time.perf_counter() - t0)
            del x
        if huge is not None:
            huge["first_touch_" + key[:3]] = None if None in shares else statistics.median(shares)
        for label, t in ((FIRST, same), (FIRST_PROGRAM, program)):
            out[(label + key, n)] = (n / statistics.median(t) / 1e9, statistics.pstdev(t) / statistics.mean(t))
    return out


def gpuopt_points(c):
    out = {}
    for key in KIND:
        for p in c["transfers"][key]:
            out[(key, p["bytes"])] = (p["gbps"], p["cv"], p["reps"])
    if c.get("d2d"):
        out[("d2d (read+write)", c["d2d"]["bytes"])] = (c["d2d"]["gbps"], c["d2d"]["cv"], c["d2d"]["reps"])
    for key in ("h2d_pageable", "d2h_pageable"):
        ft = (c.get("first_touch") or {}).get(key)
        if ft:
            out[(FIRST + key, ft["bytes"])] = (ft["gbps"], ft["cv"], 1)
    return out


def make_bufs(c):
    largest = max(p["bytes"] for k in KIND for p in c["transfers"][k])
    dev, dev2 = cp.empty(largest, dtype=cp.uint8), cp.empty(largest, dtype=cp.uint8)
    dev.fill(0x5A)
    pinned = cupyx.empty_pinned(largest, dtype=np.uint8)
    pinned[:] = 0x3C
    pageable = np.full(largest, 0xC3, dtype=np.uint8)
    return dev, dev2, pinned, pageable


def cupy_round_in_new_process(c):
    """cupy_round in a fresh Python process, as gpuopt fit runs in its own:
    the ceilings go in on stdin, the rates come back as JSON."""
    p = subprocess.run([sys.executable, __file__, "--one-cupy-round"], input=json.dumps(c),
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"the CuPy round failed: {p.stderr.strip()[-2000:]}")
    got = json.loads(p.stdout)
    return {(k, n): tuple(v) for k, n, v in got["rates"]}, got["huge"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuopt")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--fresh-process", action="store_true",
                    help="time each round's CuPy copies in a new process (as gpuopt fit runs in its own)")
    ap.add_argument("--control", action="store_true",
                    help="with --fresh-process: a second CuPy process each round, compared with the first (A/A)")
    ap.add_argument("--one-cupy-round", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.control and not a.fresh_process:
        ap.error("--control needs --fresh-process")
    if a.one_cupy_round:
        c = json.load(sys.stdin)
        huge = {}
        out = cupy_round(c, cp.cuda.Stream(non_blocking=True), make_bufs(c), huge)
        json.dump({"rates": [[k, n, list(v)] for (k, n), v in out.items()], "huge": huge}, sys.stdout)
        return 0
    if not a.gpuopt:
        ap.error("--gpuopt PATH is needed")
    stream = None if a.fresh_process else cp.cuda.Stream(non_blocking=True)
    bufs = None
    g_runs, c_runs, k_runs, name = [], [], [], None
    huge_rounds = []  # per round: the buffers' shares in huge pages, per process
    for r in range(a.rounds):
        fit = subprocess.run([a.gpuopt, "fit", "--refresh", "--no-peers", "--quiet", "--format", "json"],
                             capture_output=True, text=True)
        if fit.returncode != 0:
            sys.exit(f"gpuopt fit failed: {fit.stderr.strip()}")
        gpu = next(g for g in json.loads(fit.stdout)["gpus"] if g.get("ceilings"))
        c, name = gpu["ceilings"], gpu.get("name")
        g_runs.append(gpuopt_points(c))
        huge = {"gpuopt": c.get("huge_page_share")}
        if a.fresh_process:
            # with --control, the two CuPy processes take turns at going first
            def one(runs, who):
                rates, huge[who] = cupy_round_in_new_process(c)
                runs.append(rates)
            if a.control and r % 2:
                one(k_runs, "control")
            one(c_runs, "cupy")
            if a.control and not r % 2:
                one(k_runs, "control")
        else:
            if bufs is None:
                bufs = make_bufs(c)
            huge["cupy"] = {}
            c_runs.append(cupy_round(c, stream, bufs, huge["cupy"]))
        huge_rounds.append(huge)
        print(f"round {r + 1}: buffers in huge pages (reused, first touch h2d, d2h): " + "; ".join(
            f"{who} " + "/".join("?" if (h or {}).get(k) is None else f"{h[k]:.0%}"
                                 for k in ("pageable", "first_touch_h2d", "first_touch_d2h"))
            for who, h in huge.items()), flush=True)
    rows = []
    # CuPy's program-level first-touch copies stand beside gpuopt's first touch
    keys = [(k, k) for k in g_runs[0]] + [(k, (FIRST + k[0][len(FIRST_PROGRAM):], k[1]))
                                          for k in c_runs[0] if k[0].startswith(FIRST_PROGRAM)]
    for key, gkey in keys:
        g = [run[gkey][0] for run in g_runs if gkey in run]
        q = [run[key][0] for run in c_runs if key in run]
        paired = [x / y for x, y in zip(g, q) if y]
        rows.append({"kind": key[0], "bytes": key[1], "reps": g_runs[0][gkey][2],
                     "checked": key[1] >= 1 << 20 and key == gkey,
                     "gpuopt_gbps": statistics.median(g), "cupy_gbps": statistics.median(q),
                     "gpuopt_rounds": g, "cupy_rounds": q,
                     # each tool's own spread over the rounds (max / min - 1), and the
                     # median of the rounds' own ratios (the two ran back to back)
                     "gpuopt_spread": max(g) / min(g) - 1 if min(g) else None,
                     "cupy_spread": max(q) / min(q) - 1 if min(q) else None,
                     "paired_ratio": statistics.median(paired) if paired else None})
        if k_runs:
            k = [run[key][0] for run in k_runs if key in run]
            kp = [x / y for x, y in zip(k, q) if y]
            rows[-1].update({"control_gbps": statistics.median(k), "control_rounds": k,
                             "control_ratio": statistics.median(k) / statistics.median(q),
                             "control_paired_ratio": statistics.median(kp) if kp else None})
    ok = higher_g = higher_c = checked = control_ok = 0
    print(f"{'copy':34} {'bytes':>11} {'reps':>5} {'gpuopt GB/s':>12} {'CuPy GB/s':>10} {'ratio':>7}"
          f" {'paired':>7} {'spread g/c':>11}{'  CuPy/CuPy' if k_runs else ''}"
          f"   (medians of {a.rounds} alternating rounds)")
    for r in rows:
        r["ratio"] = r["gpuopt_gbps"] / r["cupy_gbps"]
        if r["checked"]:
            checked += 1
            ok += abs(r["paired_ratio"] - 1) <= 0.10
            higher_g += r["paired_ratio"] > 1
            higher_c += r["paired_ratio"] < 1
            control_ok += r.get("control_paired_ratio") is not None and abs(r["control_paired_ratio"] - 1) <= 0.10
        spread = f"{r['gpuopt_spread']:.0%}/{r['cupy_spread']:.0%}" if r["cupy_spread"] is not None else "-"
        control = f"{r['control_paired_ratio']:>11.3f}" if r.get("control_paired_ratio") else ""
        why = "" if r["checked"] else "  (program-level: not the same copy)" if r["bytes"] >= 1 << 20 else \
            "  (small: method differs)"
        print(f"{r['kind']:34} {r['bytes']:>11} {r['reps']:>5} {r['gpuopt_gbps']:>12.2f} "
              f"{r['cupy_gbps']:>10.2f} {r['ratio']:>7.3f} {r['paired_ratio']:>7.3f} {spread:>11}{control}"
              f"{why}")
    summary = {"rounds": a.rounds, "fresh_process": a.fresh_process, "sizes_checked": checked, "within_10pct": ok,
               "gpuopt_higher": higher_g, "cupy_higher": higher_c, "cupy": cp.__version__, "gpu": name}
    print(f"at 1 MiB and more: {ok} of {checked} within 10% of CuPy (the median of the rounds' own ratios); "
          f"gpuopt higher at {higher_g}, CuPy higher at {higher_c}")
    if k_runs:
        summary["control_within_10pct"] = control_ok
        print(f"CuPy against itself (a second process each round): {control_ok} of {checked} within 10%")
    noisy = [r for r in rows if r["checked"] and abs(r["paired_ratio"] - 1) > 0.10]
    for r in noisy:
        control = f"; CuPy against itself {r['control_paired_ratio']:.3f}" if r.get("control_paired_ratio") else ""
        print(f"  beyond 10%: {r['kind']} {r['bytes']}: paired {r['paired_ratio']:.3f} (ratio of the medians "
              f"{r['ratio']:.3f}); over the rounds gpuopt moved "
              f"{r['gpuopt_spread']:.0%}, CuPy {r['cupy_spread']:.0%}{control}")
    # Per kind of memory, over its checked sizes: how far gpuopt sits from CuPy
    # (the geometric mean of the paired ratios: a bias) and how far it strays
    # (their root mean square log: bias and noise), beside the same for CuPy
    # against itself: gpuopt measures as CuPy does where it strays no further.
    agreement = {}
    for kind in ("pinned", "pageable", "d2d"):
        rr = [r for r in rows if r["checked"] and kind in r["kind"]]
        if not rr:
            continue

        def stats(key):
            logs = [math.log(r[key]) for r in rr if r.get(key)]
            if not logs:
                return None
            return {"geomean": math.exp(statistics.mean(logs)),
                    "rms": math.exp(math.sqrt(statistics.mean([x * x for x in logs]))) - 1}
        agreement[kind] = {"sizes": len(rr), "gpuopt_vs_cupy": stats("paired_ratio"),
                           "cupy_vs_cupy": stats("control_paired_ratio")}
        g, c = agreement[kind]["gpuopt_vs_cupy"], agreement[kind]["cupy_vs_cupy"]
        line = f"{kind}: gpuopt / CuPy over {len(rr)} sizes: geometric mean {g['geomean']:.3f}, rms {g['rms']:.1%}"
        if c:
            line += f"; CuPy / CuPy: {c['geomean']:.3f}, rms {c['rms']:.1%}"
        print(line)
    summary["agreement"] = agreement
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"rows": rows, "summary": summary, "huge_page_share": huge_rounds}, f, indent=1)
        os.replace(tmp, a.out)
    return 0 if ok == checked else 1


if __name__ == "__main__":
    sys.exit(main())
