/* measure: this machine's ceilings, measured through the CUDA driver API
 * (gpu/cudadrv.h) for one or more GPUs — host<->device copies of pageable
 * and pinned memory at sizes from 4 KiB up, first-touch pageable copies,
 * device-to-device copies, copies to the other GPUs with and without peer
 * access, launch and synchronize latencies.
 *
 * The method is nvbandwidth's, extended to pageable memory: pinned and
 * device copies are queued behind a spin kernel (spin.cu, loaded as PTX)
 * that waits for the host to finish enqueuing, then timed with CUDA events;
 * pageable copies, which make the host wait while they are staged, are timed
 * with events on an idle stream. Each size: one untimed warm-up, then
 * `trials` timed trials; the median trial gives the rate and the trials'
 * coefficient of variation says how steady it was. The measuring thread runs
 * on the CPUs near the GPU (its PCI device's local_cpulist) and takes host
 * memory from that NUMA node.
 *
 * Everything runs in a child process (fork), so that the driver's memory
 * and threads, a crash or a hang stay out of gpuopt. */
#ifndef GPUOPT_MEASURE_H
#define GPUOPT_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/ceilings.h"

struct measure_opts {
	unsigned trials;     /* timed trials per size (>= 3) */
	uint64_t max_bytes;  /* the largest copy; made smaller when memory is short */
	unsigned step;       /* sizes from 4 KiB grow by this factor (4; 16 for --quick) */
	bool peers;          /* copies to the other GPUs, when there are */
	bool progress;       /* a line on stderr per step */
	double timeout_s;    /* for everything */
};

/* A GPU to measure, as gpuinfo_query describes it. */
struct measure_target {
	int cuda_index;
	const char *uuid, *name, *pci_bus_id;
};

/* Measures each target and fills out[i] (the caller frees each with
 * ceilings_free), identity fields included (driver_version and
 * cuda_driver_version are copied in). False with *why owned when nothing
 * could be measured (no driver, a CUDA error, a crash, the timeout); a GPU
 * that failed alone leaves out[i].gpu_uuid NULL and its reason in
 * errors[i] (owned; NULL when it worked). */
bool measure_run(const struct measure_opts *o, const struct measure_target *targets, size_t n,
		 const char *driver_version, const char *cuda_driver_version, struct ceilings *out,
		 char **errors, char **why);

/* The copy sizes measured: 4 KiB, then times step, up to max_bytes.
 * Writes at most cap of them to sizes; returns how many. */
size_t measure_sizes(uint64_t max_bytes, unsigned step, uint64_t *sizes, size_t cap);

#endif
