/* fuzz_probe: any bytes as what the Python probe of `gpuopt doctor` printed
 * (data/probes/doctor.py's JSON events, one per line, the channel's token
 * taken off) — collected into a
 * probe record, then checked by doctor's rules, on a machine without a GPU
 * and on one with, and written as JSON; must neither crash nor leak. */
#include <stdint.h>
#include <stdlib.h>

#include "doctor/doctor.h"
#include "doctor/doctor_int.h"
#include "gpu/sysinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *no_gpu, *one_gpu;
static struct doctor_kb kb;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!no_gpu) {
		no_gpu = json_pack("{s:b, s:s, s:s, s:n, s:n, s:{s:b, s:s}, s:{s:b, s:s}, s:[]}", "found", 0,
				   "status", "no NVIDIA GPU", "reason", "none", "driver_version",
				   "cuda_driver_version", "nvml", "loaded", 0, "error", "libnvidia-ml.so.1: x",
				   "cuda", "loaded", 0, "error", "libcuda.so.1: x", "devices");
		one_gpu = json_pack("{s:b, s:s, s:s, s:s, s:[{s:i, s:s, s:s, s:I, s:I, s:I, s:[]}]}", "found", 1,
				    "status", "1 NVIDIA GPU", "driver_version", "550.54.15", "cuda_driver_version",
				    "12.4", "devices", "index", 0, "name", "NVIDIA L4", "compute_capability", "8.9",
				    "memory_total_bytes", (json_int_t)24 << 30, "memory_free_bytes",
				    (json_int_t)23 << 30, "memory_used_bytes", (json_int_t)1 << 30, "processes");
		char *why = NULL;
		if (!no_gpu || !one_gpu || !doctor_kb_load(&kb, &why))
			abort();
	}
	json_t *rec = json_pack("{s:s, s:b, s:n, s:[], s:[], s:[], s:[]}", "interpreter", "python3", "found", 1,
				"error", "cuda_dists", "packages", "failures", "cudart");
	struct sysinfo_pending pending = {0};
	sysinfo_probe_collect(rec, (const char *)data, size, &pending);
	free(pending.name);
	for (int g = 0; g < 2; g++) {
		struct doctor_result *r = doctor_check_with(&kb, g ? one_gpu : no_gpu, rec);
		json_decref(doctor_result_json(r));
		doctor_result_free(r);
	}
	json_decref(rec);
	return 0;
}
