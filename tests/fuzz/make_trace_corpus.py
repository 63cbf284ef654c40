#!/usr/bin/env python3
"""Writes the seed corpora of the trace fuzz targets from the H200 fixtures
(tests/e2e/fixtures/trace): process summaries as the tracer writes them
(corpus/trace_summary), events files in the tracer's binary format
(corpus/trace_events, the layout of src/trace/tracefmt.h), and a few
malformed saved traces (corpus/trace; the fixtures themselves are seeds
too). Usage: make_trace_corpus.py (from anywhere)."""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "e2e", "fixtures", "trace")
EVENT = struct.Struct("<BBBBIIIQQQIII3I3II")
assert EVENT.size == 80


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    for name in ("cupy_roundtrip", "torch_pinned_copy", "nvtx_fallback", "cupy_crash", "torch_tiny_kernels_sampled"):
        doc = json.load(open(os.path.join(FIX, name + ".json")))
        p = doc["processes"][0]
        events = p.pop("events", [])
        write(os.path.join(HERE, "corpus", "trace_summary", name + ".json"), json.dumps(p))
        data = b"GPUOPTEV" + struct.pack("<II", 1, 80)
        for e in events[:40]:
            data += EVENT.pack(*e, 0)
        write(os.path.join(HERE, "corpus", "trace_events", name + ".events"), data)
    # a sampled summary with allocations made between windows (sampling.unseen_allocs)
    p = json.load(open(os.path.join(FIX, "cupy_tiny_kernels_sampled.json")))["processes"][0]
    p.pop("events", None)
    p["sampling"]["unseen_allocs"] = 3
    write(os.path.join(HERE, "corpus", "trace_summary", "sampled_unseen_allocs.json"), json.dumps(p))
    # what the callbacks count of every call: copy calls by direction, the idle after a drain
    p = json.load(open(os.path.join(FIX, "cupy_roundtrip.json")))["processes"][0]
    p.pop("events", None)
    for st in p["site_stats"]:
        n = st["api"].get("memcpy", [0, 0])[0]
        st["copy_calls"] = [[1, n, 8 * n, 1000 * n]] if n else []
        st["drained"] = [st["api"].get("sync", [0, 0])[0], 300000]
    write(os.path.join(HERE, "corpus", "trace_summary", "copy_calls_drained.json"), json.dumps(p))
    write(os.path.join(HERE, "corpus", "trace_events", "bad_magic.events"), b"GPUOPTEX" + struct.pack("<II", 1, 80))
    write(os.path.join(HERE, "corpus", "trace_events", "bad_size.events"), b"GPUOPTEV" + struct.pack("<II", 1, 64))
    write(os.path.join(HERE, "corpus", "trace_summary", "bad_version.json"),
          '{"format":"gpuopt-trace-process","version":2}')
    small = json.load(open(os.path.join(FIX, "nvtx_fallback.json")))
    write(os.path.join(HERE, "corpus", "trace", "nvtx_fallback.json"), json.dumps(small))
    small["version"] = 9
    write(os.path.join(HERE, "corpus", "trace", "bad_version.json"), json.dumps(small))
    write(os.path.join(HERE, "corpus", "trace", "not_json.json"), '{"format": "gpuopt-trace",')
    write(os.path.join(HERE, "corpus", "trace", "empty.json"), "")


if __name__ == "__main__":
    main()
