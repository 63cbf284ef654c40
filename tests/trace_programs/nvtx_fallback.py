"""Emits exactly the NVTX ranges cudf.pandas emits (domain "cudf_pandas",
EXECUTE_FAST for calls cuDF ran, EXECUTE_SLOW for calls that fell back to
pandas; cudf 26.08 python/cudf/cudf/pandas/fast_slow_proxy.py) and the log
lines that cuml.accel -v and networkx's DEBUG logger print, so that gpuopt
trace's cpu-fallback detection is tested on a real NVTX client (the nvtx
package) and real output. RAPIDS itself cannot be installed on the machines
here. Usage: nvtx_fallback.py [FAST SLOW]"""
import logging
import sys
import time

import nvtx

fast = int(sys.argv[1]) if len(sys.argv) > 1 else 30
slow = int(sys.argv[2]) if len(sys.argv) > 2 else 12


def groupby_sum(i):
    with nvtx.annotate("EXECUTE_FAST", color=0x92C5DE, domain="cudf_pandas"):
        time.sleep(0.0002)


def apply_udf(i):
    with nvtx.annotate("EXECUTE_SLOW", color=0x0571B0, domain="cudf_pandas"):  # EXPECT: cpu-fallback
        time.sleep(0.002)


for i in range(fast):
    groupby_sum(i)
for i in range(slow):
    apply_udf(i)  # the fallback line

# cuml.accel -v (cuml 26.08 python/cuml/cuml/accel/core.py prints "[cuml.accel] " + msg)
print("[cuml.accel] `Ridge.fit` ran on GPU", flush=True)
for _ in range(3):
    print("[cuml.accel] `Ridge.fit` falling back to CPU: `positive=True` is not supported", flush=True)
print("[cuml.accel] `KMeans` parameters failed to sync to GPU, falling back to CPU: "
      "callable init is not supported", flush=True)

# networkx's dispatcher at DEBUG (networkx 3.6 networkx/utils/backends.py)
logging.basicConfig(level=logging.DEBUG, format="%(levelname)s:%(name)s:%(message)s")
log = logging.getLogger("networkx.utils.backends")
log.debug("Using backend '%s' for call to '%s' with arguments: %s", "cugraph", "pagerank", "(G)")
log.debug("Backend '%s' does not implement '%s'", "cugraph", "simple_cycles")
log.debug("Backend '%s' can't run `%s` with arguments: %s%s", "cugraph", "pagerank", "(G, dangling=d)",
          ", because: dangling is not supported")
