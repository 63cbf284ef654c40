/* fuzz_trace_events: any bytes as the tracer's binary events file
 * (DIR/PID.events, tracefmt.h), read for a summary with as many strings and
 * sites as the tracer can have: refused with a reason, or every record in
 * range. */
#include <stdint.h>
#include <stdlib.h>

#include "trace/tracefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_process p = {0};
	p.nstrings = 1u << 16; /* the tracer's own limits (tracer.h) */
	p.nsites = 4096;
	char *why = NULL;
	if (trace_events_decode(data, size, UINT64_MAX, &p, &why)) {
		for (size_t i = 0; i < p.nevents; i++)
			if (p.events[i].name >= p.nstrings || p.events[i].site >= p.nsites ||
			    p.events[i].end < p.events[i].start)
				abort();
		free(p.events);
	} else {
		if (!why)
			abort();
		free(why);
	}
	return 0;
}
