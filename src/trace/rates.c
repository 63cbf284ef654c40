/* rates: see rates.h. */
#include "rates.h"

#include <stdlib.h>
#include <string.h>

#include "gpu/ceilings.h"

/* gpuopt fit's cached measurement for the device's GPU, when there is one
 * for this driver and gpuopt: the pinned rate of 64 MiB copies. */
static double fit_rate(const struct trace *t, int dir, unsigned device)
{
	json_t *devs = json_object_get(t->gpu, "devices");
	json_t *d = json_array_get(devs, device);
	const char *uuid = json_string_value(json_object_get(d, "uuid"));
	const char *driver = json_string_value(json_object_get(t->gpu, "driver_version"));
	if (!uuid || !driver)
		return 0;
	struct ceilings c;
	memset(&c, 0, sizeof c);
	char *why = NULL;
	double gbps = 0;
	if (ceilings_load_cached(uuid, driver, &c, &why) == CEIL_OK)
		gbps = ceilings_gbps(&c, dir == DIR_D2H ? CEIL_D2H_PINNED : CEIL_H2D_PINNED, 64u << 20);
	free(why);
	ceilings_free(&c);
	return gbps > 0 ? gbps : 0;
}

double trace_pinned_rate(const struct trace *t, const struct trace_config *cfg, int dir,
			 unsigned device, const char **source)
{
	double fit = fit_rate(t, dir, device);
	if (fit > 0) {
		*source = "gpuopt fit's measurement of this GPU (its cache)";
		return fit;
	}
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
