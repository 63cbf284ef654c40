// spin.cu: the two kernels `gpuopt fit` loads, as PTX, through the CUDA driver
// API (src/fit/measure.c). The build turns this file into spin.ptx with nvcc
// (tools/embed_ptx.py); without nvcc it embeds the committed spin.ptx, which
// was generated the same way (tests/unit/fit checks that the two agree
// whenever nvcc is there).
//
// gpuopt_spin: one thread that waits until the host writes a nonzero value
// to *flag (host memory mapped into the device), so that the copies queued
// behind it start together, after the host has finished enqueuing them; the
// enqueue cost stays out of what CUDA events time (nvbandwidth's method). It
// gives up after timeout_ns of %globaltimer and then sets *timed_out, so a
// host that dies cannot leave the GPU spinning.
//
// gpuopt_empty: an empty kernel, for launch latency.
extern "C" __global__ void gpuopt_spin(volatile unsigned int *flag, unsigned long long timeout_ns,
                                       unsigned int *timed_out)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*flag == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            *timed_out = 1;
            break;
        }
    }
}

extern "C" __global__ void gpuopt_empty(void)
{
}
