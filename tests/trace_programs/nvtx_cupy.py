"""cudf.pandas' NVTX ranges (domain cudf_pandas) around real GPU work, on the GPU machine."""
import cupy as cp
import nvtx
from gpucheck import report

x = cp.random.rand(1 << 20)
for i in range(40):
    with nvtx.annotate("EXECUTE_FAST", domain="cudf_pandas"):
        x = x * 0.5 + 1.0
for i in range(15):
    with nvtx.annotate("EXECUTE_SLOW", domain="cudf_pandas"):  # EXPECT: cpu-fallback
        h = cp.asnumpy(x)
        h.sort()
print("[cuml.accel] `Ridge.fit` falling back to CPU: `positive=True` is not supported", flush=True)
report(fast=40, slow=15)
