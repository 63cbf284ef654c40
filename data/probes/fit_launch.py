# The Python side of `gpuopt fit --python PY`: run as `PY -c <channel.py +
# this file> N` by gpu/sysinfo.c (sysinfo_python_probe), never imported by
# gpuopt; its answers go through emit() of data/probes/channel.py. Times
# what one tiny array operation costs a Python program on the GPU — through
# CuPy if it is there, else PyTorch on cuda — host side (the call returns;
# the GPU works on), and with a synchronize after each. Seven trials of N
# operations after a warm-up; each trial's mean in microseconds.
# Events, one JSON object per message (the protocol of data/probes/doctor.py):
#   {"event": "python", ...}, {"event": "latency", "via": ..., "op_us": [...],
#   "op_sync_us": [...]} or {"event": "latency", "error": ...}, {"event": "done"}
import sys
import time

sys.dont_write_bytecode = True


emit({"event": "python", "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
      "executable": sys.executable, "prefix": sys.prefix})
n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1000


def timed(op, sync, trials=7):
    for _ in range(50):
        op()
    sync()
    op_us, op_sync_us = [], []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(n):
            op()
        t1 = time.perf_counter()
        sync()
        op_us.append((t1 - t0) / n * 1e6)
        t0 = time.perf_counter()
        for _ in range(n):
            op()
            sync()
        op_sync_us.append((time.perf_counter() - t0) / n * 1e6)
    return op_us, op_sync_us


def with_cupy():
    import cupy
    a = cupy.zeros(1, dtype=cupy.float32)

    def op():
        a.__iadd__(1)
    stream = cupy.cuda.get_current_stream()
    return "cupy " + cupy.__version__, timed(op, stream.synchronize)


def with_torch():
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    a = torch.zeros(1, device="cuda")

    def op():
        a.add_(1)
    return "torch " + torch.__version__, timed(op, torch.cuda.synchronize)


errors = []
for way in (with_cupy, with_torch):
    try:
        via, (op_us, op_sync_us) = way()
        emit({"event": "latency", "via": via, "op_us": op_us, "op_sync_us": op_sync_us})
        break
    except BaseException as e:
        errors.append("%s: %s: %s" % (way.__name__[5:], type(e).__name__, " ".join(str(e).split())[:200]))
else:
    emit({"event": "latency", "error": "; ".join(errors)})
emit({"event": "done"})
