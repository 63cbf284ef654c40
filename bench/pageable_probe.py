#!/usr/bin/env python3
"""Why gpuopt fit's pageable copy rates and CuPy's differ (issue 12): the
same pageable copies in one process, each factor changed on its own.

bench/fit_vs_cupy.py times CuPy's copies with cupy.cuda.runtime.memcpyAsync
(the runtime API) from a NumPy array; gpuopt fit times cuMemcpyHtoDAsync /
cuMemcpyDtoHAsync (the driver API) from its own mapping (mmap, with
MADV_HUGEPAGE from 4 MiB, as NumPy asks), in a process of its own. Here, in
one process and interleaved over rounds, each pageable copy is timed four
ways: {runtime API, driver API} x {NumPy array, gpuopt-style mapping}, the
same reps per trial and the same events on one non-blocking stream; and
between the rounds `gpuopt fit --refresh` runs in its own process. How much
of each buffer the kernel backs with huge pages is read from /proc/self/smaps.

Usage: python3 bench/pageable_probe.py --gpuopt PATH [--rounds 5] [--out FILE.json]
"""
import argparse
import ctypes
import json
import mmap
import random
import statistics
import subprocess
import sys

import numpy as np
import cupy as cp

SIZES = [4 << 20, 64 << 20, 256 << 20]
TRIAL_BYTES = 64 << 20


def reps_for(n):
    return max(1, min(128, -(-TRIAL_BYTES // n)))


def huge_kib(addr, n):
    """AnonHugePages of the mappings over [addr, addr + n), in KiB (None if
    unknown): a madvise of part of a mapping splits it, so all are summed."""
    try:
        lines = open("/proc/self/smaps").read().splitlines()
    except OSError:
        return None
    inside, total = False, 0
    for line in lines:
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo < addr + n and addr < hi
        elif inside and head == "AnonHugePages:":
            total += int(line.split()[1])
    return total


def gpuopt_like(n, huge=True):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge and n >= 4 << 20 and hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    a = np.frombuffer(m, dtype=np.uint8)
    a[:] = 0xC3
    return m, a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuopt", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--out")
    a = ap.parse_args()
    cuda = ctypes.CDLL("libcuda.so.1")
    for f in ("cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2"):
        getattr(cuda, f).restype = ctypes.c_int
    cuda.cuMemcpyHtoDAsync_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    cuda.cuMemcpyDtoHAsync_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
    largest = max(SIZES)
    dev = cp.empty(largest, dtype=cp.uint8)
    dev.fill(0x5A)
    stream = cp.cuda.Stream(non_blocking=True)
    numpy_buf = np.full(largest, 0xC3, dtype=np.uint8)
    _mapping, mapped = gpuopt_like(largest)  # the mmap stays open while the array uses it
    _mapping4k, mapped4k = gpuopt_like(largest, huge=False)
    _mapping16, mapped16 = gpuopt_like(largest + 16)
    bufs = {"numpy": numpy_buf, "mapping": mapped, "mapping-4k": mapped4k,
            "mapping+16": mapped16[16:]}  # where glibc puts a large malloc: NumPy's arrays start there
    thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip() \
        if sys.platform == "linux" else None
    huge = {k: huge_kib(v.ctypes.data, v.nbytes) for k, v in bufs.items()}
    print(f"THP: {thp}; huge pages backing: " +
          ", ".join(f"{k} {v} KiB of {largest >> 10}" for k, v in huge.items()), flush=True)

    def copy_fn(api, direction, buf, n):
        h, d, s = buf.ctypes.data, dev.data.ptr, stream.ptr
        if api == "runtime":
            if direction == "h2d":
                return lambda: cp.cuda.runtime.memcpyAsync(d, h, n, 1, s)
            return lambda: cp.cuda.runtime.memcpyAsync(h, d, n, 2, s)
        if direction == "h2d":
            return lambda: cuda.cuMemcpyHtoDAsync_v2(d, h, n, s)
        return lambda: cuda.cuMemcpyDtoHAsync_v2(h, d, n, s)

    def timed(fn, reps):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record(stream)
        for _ in range(reps):
            rc = fn()
            if rc not in (None, 0):
                sys.exit(f"driver call failed: {rc}")
        e1.record(stream)
        e1.synchronize()
        return cp.cuda.get_elapsed_time(e0, e1) / 1e3

    combos = [(api, direction, buf, n) for api in ("runtime", "driver") for direction in ("h2d", "d2h")
              for buf in bufs for n in SIZES]
    rng = random.Random(1)
    samples, fit = {}, {}
    for rnd in range(a.rounds):
        order = combos[:]
        rng.shuffle(order)
        for api, direction, buf, n in order:
            fn, reps = copy_fn(api, direction, bufs[buf], n), reps_for(n)
            timed(fn, reps)
            t = statistics.median(timed(fn, reps) for _ in range(a.trials))
            samples.setdefault(f"{direction} {api} {buf} {n}", []).append(n * reps / t / 1e9)
        r = subprocess.run([a.gpuopt, "fit", "--refresh", "--no-peers", "--quiet", "--format", "json"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            c = next(g for g in json.loads(r.stdout)["gpus"] if g.get("ceilings"))["ceilings"]
            for direction in ("h2d", "d2h"):
                for p in c["transfers"][f"{direction}_pageable"]:
                    if p["bytes"] in SIZES:
                        fit.setdefault(f"{direction} gpuopt-fit {p['bytes']}", []).append(p["gbps"])
        else:
            print(f"gpuopt fit failed: {r.stderr.strip()}", flush=True)
        print(f"round {rnd + 1} done", flush=True)
    rows = []
    cols = [f"{api}/{buf}" for api in ("runtime", "driver") for buf in bufs] + ["gpuopt fit"]
    print(f"\n{'copy':5} {'MiB':>4} " + " ".join(f"{c:>17}" for c in cols) + f"   GB/s, medians of {a.rounds} rounds")
    for direction in ("h2d", "d2h"):
        for n in SIZES:
            row = {"direction": direction, "bytes": n}
            for api in ("runtime", "driver"):
                for buf in bufs:
                    row[f"{api}/{buf}"] = statistics.median(samples[f"{direction} {api} {buf} {n}"])
            g = fit.get(f"{direction} gpuopt-fit {n}")
            row["gpuopt fit"] = statistics.median(g) if g else None
            rows.append(row)
            print(f"{direction:5} {n >> 20:>4} " + " ".join(
                f"{row[c]:>17.2f}" if row[c] else f"{'-':>17}" for c in cols))
    if a.out:
        json.dump({"thp": thp, "huge_kib": huge, "rows": rows, "samples": samples, "fit": fit,
                   "rounds": a.rounds, "trials": a.trials}, open(a.out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
