/* fuzz_trace_summary: any bytes as a process summary that the injected
 * tracer writes (DIR/PID.json): refused with a reason, or accepted with
 * every site, string and counter reference in range. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "trace/tracefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t err;
	json_t *o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err);
	if (!o)
		return 0;
	struct trace_process p;
	char *why = NULL;
	if (trace_process_parse(o, &p, &why)) {
		for (size_t i = 0; i < p.nstats; i++)
			if (p.stats[i].site >= p.nsites)
				abort();
		for (size_t i = 0; i < p.ngaps; i++)
			if (p.gaps[i].prev_site >= p.nsites || p.gaps[i].next_site >= p.nsites)
				abort();
		for (size_t i = 0; i < p.nnvtx; i++)
			if (p.nvtx[i].site >= p.nsites)
				abort();
		trace_process_clear(&p);
	} else if (!why) {
		abort();
	}
	free(why);
	json_decref(o);
	return 0;
}
