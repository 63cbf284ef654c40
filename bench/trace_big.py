#!/usr/bin/env python3
"""Makes a large saved trace (`gpuopt trace -o` format, "gpuopt-trace") from a
real recorded one, for measuring what reading big traces costs.

The timeline of every process is repeated until the file reaches --size MB:
copy k of an event is the recorded event moved later by k times the
timeline's span (plus 1 ms), its correlation id moved by k times (the
largest id + 1), so times stay ordered, ends follow starts and each
call still pairs with its own kernel or copy. Strings and sites are the
recorded ones (every id an event names stays valid). The summary's
events_written and its clock's last and end moved with the last copy; the
other counters (launches, kernel times per line) stay those of the
recording, so `gpuopt trace show` reports the recorded run, over a longer
timeline.

Usage: trace_big.py [--from FIXTURE.json] [--size MB] OUT.json
(default: tests/e2e/fixtures/trace/cupy_tiny_kernels.json, about 85 MB)."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "tests", "e2e", "fixtures", "trace", "cupy_tiny_kernels.json")


def row_text(e):
    return "[" + ",".join(str(v) for v in e) + "]"


def moved(e, k, span, corr):
    """Copy k of event e: k spans later, its correlation id k blocks on."""
    r = list(e)
    r[6] += k * corr
    r[7] += k * span
    r[8] += k * span
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="src", default=DEFAULT, help="a saved trace with a timeline")
    ap.add_argument("--size", type=float, default=85.0, help="target size in MB (10^6 bytes)")
    ap.add_argument("out")
    a = ap.parse_args()
    with open(a.src) as f:
        trace = json.load(f)
    if trace.get("format") != "gpuopt-trace":
        sys.exit(f"trace_big: {a.src}: not a saved gpuopt trace")
    procs = [p for p in trace["processes"] if p.get("events")]
    if not procs:
        sys.exit(f"trace_big: {a.src}: no process has a timeline (record it with --timeline)")
    base = len(json.dumps(trace, separators=(",", ":")))
    shifts = {}
    for p in procs:
        ev = p["events"]
        shifts[id(p)] = (max(e[8] for e in ev) - min(e[7] for e in ev) + 1_000_000, max(e[6] for e in ev) + 1)

    def copy_len(k):  # the text of copy k (its ids and times grow longer)
        return sum(sum(len(row_text(moved(e, k, *shifts[id(p)]))) + 1 for e in p["events"]) for p in procs)

    copies = max(1, int((a.size * 1e6 - base) / copy_len(0)))
    copies = max(1, int((a.size * 1e6 - base) / ((copy_len(0) + copy_len(copies)) / 2)))
    for p in procs:
        ev = p["events"]
        span, corr = shifts[id(p)]
        if corr * copies > 0xFFFFFFFF:
            sys.exit("trace_big: too many copies for 32-bit correlation ids")
        p["counts"]["events_written"] = len(ev) * copies
        p["clock"]["last"] += span * (copies - 1)
        p["clock"]["end"] += span * (copies - 1)
    # the text without the events, then each process's rows streamed in its place
    marker = "\"@EVENTS@\""
    saved = {}
    for p in procs:
        saved[id(p)] = p["events"]
        p["events"] = "@EVENTS@"
    text = json.dumps(trace, separators=(",", ":"))
    parts = text.split(marker)
    assert len(parts) == len(procs) + 1
    with open(a.out, "w") as out:
        for i, p in enumerate(procs):
            out.write(parts[i])
            span, corr = shifts[id(p)]
            ev = saved[id(p)]
            out.write("[")
            first = True
            for k in range(copies):
                out.write(("" if first else ",") + ",".join(row_text(moved(e, k, span, corr)) for e in ev))
                first = False
            out.write("]")
        out.write(parts[-1])
    size = os.path.getsize(a.out)
    n = sum(len(saved[id(p)]) for p in procs) * copies
    print(f"{a.out}: {size / 1e6:.1f} MB, {n} events ({copies} copies of {a.src})")


if __name__ == "__main__":
    main()
