"""A large copy from pageable host memory (numpy) to the GPU, and back.
CuPy stages a host-to-device copy from pageable memory through a pinned
buffer it allocates (the GPU sees a pinned copy; the host copies into the
buffer first), so the device-to-host copy is the one the GPU does from
pageable memory."""
import numpy as np
import cupy as cp
from gpucheck import CupyEvents, arg, report

mib = arg(1, 512)
host = np.random.rand(mib * (1 << 20) // 8)
cp.cuda.Device().synchronize()
times = []
for _ in range(3):
    with CupyEvents() as ev:
        dev = cp.asarray(host)
    times.append(ev.ms)
with CupyEvents() as back:
    out = cp.asnumpy(dev)  # EXPECT: pageable-transfer # EVENTS: d2h
report(h2d_bytes=host.nbytes * 3, staged_h2d_event_ms=sum(times), d2h_bytes=host.nbytes, d2h_event_ms=back.ms)
