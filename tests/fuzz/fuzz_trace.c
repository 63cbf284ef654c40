/* fuzz_trace: any bytes as a saved trace (`gpuopt trace -o` / `trace show`):
 * the reader must refuse what is malformed with a reason and never crash;
 * whatever it accepts must go through the analysis, both reports and the
 * Chrome-trace export without reading out of bounds. The rules' data file
 * is loaded once, outside the per-input path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace/analyze.h"
#include "trace/config.h"
#include "trace/export.h"
#include "trace/report.h"
#include "trace/tracefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct trace_config cfg;
static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sink) {
		char *why = NULL;
		if (!trace_config_load(&cfg, &why))
			abort();
		sink = fopen("/dev/null", "w");
		if (!sink)
			abort();
	}
	struct trace t;
	char *why = NULL;
	if (!trace_parse((const char *)data, size, &t, &why)) {
		if (!why)
			abort();
		free(why);
		return 0;
	}
	if (why)
		abort();
	struct trace_report *r = trace_analyze(&t, &cfg);
	json_t *j = trace_report_json(r);
	json_decref(j);
	struct trace_report_style st = {5, 5};
	trace_report_text(sink, r, &st);
	trace_export_chrome_to(&t, sink);
	trace_report_free(r);
	trace_clear(&t);
	return 0;
}
