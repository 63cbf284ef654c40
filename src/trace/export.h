/* export: a trace's timeline in the Chrome trace-event format that Perfetto
 * and Holistic Trace Analysis read, with Kineto's (torch.profiler's) names:
 * "X" events of categories kernel, gpu_memcpy, gpu_memset, cuda_sync on the
 * GPU (pid = device, tid = stream), cuda_runtime / cuda_driver,
 * python_function (the Python line that made consecutive calls) and
 * user_annotation (NVTX ranges) on the host (pid, tid), args device,
 * stream, correlation, grid, block, bytes, "memory bandwidth (GB/s)", and
 * "ac2g" flow events from each call to the GPU work it launched.
 * Timestamps are microseconds (with nanosecond decimals) on the tracer's
 * clock. Needs the timeline (gpuopt trace --timeline). */
#ifndef GPUOPT_TRACE_EXPORT_H
#define GPUOPT_TRACE_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "tracefile.h"

/* Writes path whole or not at all; false with *why (owned). */
bool trace_export_chrome(const struct trace *t, const char *path, char **why);
/* The same into an open stream (no check that there is a timeline). */
void trace_export_chrome_to(const struct trace *t, FILE *f);

#endif
