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
#include <stdbool.h>
#include <stddef.h>

/* The GPU record as a new JSON object (never NULL):
 *   found (bool), status ("no NVIDIA GPU" or "N NVIDIA GPU(s)"), reason
 *   (why none, else null), driver_version, cuda_driver_version (the highest
 *   CUDA version the driver serves, "13.0"), nvml_version, nvml / cuda
 *   ({loaded, error}), devices: [{index, name, uuid, pci_bus_id,
 *   memory_total_bytes, memory_used_bytes, memory_free_bytes,
 *   compute_capability, multiprocessors, clocks_mhz {graphics, sm, memory},
 *   max_clocks_mhz {...}, utilization_pct {gpu, memory}, temperature_c,
 *   l2_cache_bytes, memory_bus_width_bits, cuda_index,
 *   pcie {generation, max_generation, gpu_max_generation, width, max_width},
 *   persistence_mode, mig_mode {enabled, pending}, ecc {enabled, pending,
 *   uncorrected_volatile, corrected_volatile, uncorrected_aggregate,
 *   corrected_aggregate}, processes [{pid, name, memory_used_bytes}],
 *   nvlinks [{link, version, remote_pci_bus_id}] (active links; null: none
 *   or not supported), numa_node, local_cpus ("0-15"),
 *   peers [{index (of the other device in devices), link ("NVLink" or
 *   "PCIe"), nvlinks_direct, topology (nvidia-smi topo's "PIX", "PXB",
 *   "PHB", "NODE", "SYS", "internal"), p2p_read, p2p_write, p2p_nvlink,
 *   p2p_atomics (what NVML allows), cuda_can_access_peer}]}], unknown
 *   values null. Gives up after timeout_s seconds (a hung driver). */
json_t *gpuinfo_query(double timeout_s);

/* Where the PCI device bus_id ("0000:19:00.0" or NVML's "00000000:19:00.0")
 * sits: its NUMA node (-1 when the machine has one node or does not say)
 * and the CPUs near it (*cpulist, owned, "0-15,32-47", or NULL), from
 * /sys/bus/pci/devices/. False when sysfs has no such device. */
bool gpu_pci_locality(const char *bus_id, int *numa_node, char **cpulist);

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
