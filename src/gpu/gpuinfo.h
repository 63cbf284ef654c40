/* gpuinfo: which NVIDIA GPU this machine has, and how busy it is while a
 * command runs.
 *
 * Everything is read at run time through NVML (libnvidia-ml.so.1) and the
 * CUDA driver API (libcuda.so.1), both opened with dlopen: gpuopt links
 * neither, builds without CUDA, and on a machine without an NVIDIA driver or
 * GPU records plainly "no NVIDIA GPU" and the reason.
 *
 * Both the query and the sampler do their work in child processes (fork),
 * so that the driver's memory (some 20 MB), threads and any crash or hang
 * stay out of gpuopt — whose own resident size is the floor of every peak
 * RSS it measures (see runner.h). */
#ifndef GPUOPT_GPUINFO_H
#define GPUOPT_GPUINFO_H

#include <jansson.h>
#include <stddef.h>

/* The GPU record as a new JSON object (never NULL):
 *   found (bool), status ("no NVIDIA GPU" or "N NVIDIA GPU(s)"), reason
 *   (why none, else null), driver_version, cuda_driver_version,
 *   nvml_version, nvml / cuda ({loaded, error}), devices: [{index, name,
 *   uuid, memory_total_bytes, memory_used_bytes, memory_free_bytes,
 *   compute_capability, multiprocessors, clocks_mhz {graphics, sm, memory},
 *   max_clocks_mhz {...}, utilization_pct {gpu, memory}, temperature_c,
 *   l2_cache_bytes, memory_bus_width_bits, cuda_index}], unknown values
 *   null. Gives up after timeout_s seconds (a hung driver). */
json_t *gpuinfo_query(double timeout_s);

/* One device's use during one run. samples = 0 when the run ended before
 * the first sample; the other fields are then meaningless. */
struct gpu_usage {
	unsigned samples;
	double mem_used_first;   /* bytes, the sample taken as the run started */
	double mem_used_peak, mem_used_mean;
	double util_peak, util_mean; /* percent of time a kernel ran, as NVML reports it */
};

struct gpu_sampler;

/* Starts an idle sampling process that opens NVML and, between begin and
 * end, reads every device's memory in use and utilization every
 * interval_ms (a first sample at begin). NULL when NVML or a GPU is missing
 * (nothing to sample). Call it while gpuopt has no other threads. */
struct gpu_sampler *gpu_sampler_new(unsigned interval_ms);
size_t gpu_sampler_devices(const struct gpu_sampler *s);
void gpu_sampler_begin(struct gpu_sampler *s);
/* Stops sampling and writes one gpu_usage per device into out; all zero
 * (no sample) if the sampling process has gone. */
void gpu_sampler_end(struct gpu_sampler *s, struct gpu_usage *out);
/* Ends the sampling process; accepts NULL. */
void gpu_sampler_free(struct gpu_sampler *s);

#endif
