/* rates: the pinned host<->device copy rate that the pageable-transfer rule
 * compares pageable copies with. One function, so that the source can
 * change in one place: gpuopt fit's measurement of the device's GPU when
 * its cache (gpu/ceilings.h) holds one for this driver, else the trace's
 * own pinned copies (when it made large ones), else data/trace.json's
 * pinned_rates_gbps. */
#ifndef GPUOPT_TRACE_RATES_H
#define GPUOPT_TRACE_RATES_H

#include "config.h"
#include "tracefile.h"

/* The pinned rate in GB/s for dir (DIR_H2D or DIR_D2H) on device; *source
 * says where it came from (static text). */
double trace_pinned_rate(const struct trace *t, const struct trace_config *cfg, int dir,
			 unsigned device, const char **source);

#endif
