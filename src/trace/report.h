/* report: a trace report as text for people (findings first, most costly
 * first; then the time budget, the lines, the kernels, the devices and how
 * the recording went) or as JSON (format "gpuopt-trace-report"). */
#ifndef GPUOPT_TRACE_REPORT_H
#define GPUOPT_TRACE_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "analyze.h"

struct trace_report_style {
	size_t max_lines;    /* rows of the per-line table (0: all) */
	size_t max_kernels;  /* rows of the kernel table (0: all) */
};

void trace_report_text(FILE *out, const struct trace_report *r, const struct trace_report_style *st);
/* A new JSON object (the caller decrefs). */
json_t *trace_report_json(const struct trace_report *r);

#endif
