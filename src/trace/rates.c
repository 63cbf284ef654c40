/* rates: see rates.h. */
#include "rates.h"

double trace_pinned_rate(const struct trace *t, const struct trace_config *cfg, int dir,
			 unsigned device, const char **source)
{
	(void)device; /* per-device rates come with gpuopt fit's measurements */
	uint64_t bytes = 0, ns = 0, n = 0;
	for (size_t i = 0; i < t->nprocs; i++)
		for (size_t k = 0; k < t->procs[i].nstats; k++) {
			const struct trace_copy *c = &t->procs[i].stats[k].copy[dir][HK_PINNED];
			bytes += c->bytes;
			ns += c->ns;
			n += c->n;
		}
	if (n && bytes / n >= (1u << 20) && ns > 0) {
		*source = "this run's own pinned copies";
		return (double)bytes / (double)ns;
	}
	*source = cfg->pinned_source ? cfg->pinned_source : "gpuopt's default";
	return cfg->pinned_gbps[dir == DIR_D2H ? 1 : 0];
}
