/* peaks: the GPUs' published peaks and the PCIe link rates, read from
 * data/gpus.json (the table and its sources are there, not here). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "core/util.h"
#include "fit.h"

/* The parsed table, or NULL (with GPUOPT_DATA_DIR set wrongly). Owned by the caller. */
static json_t *load_table(void)
{
	struct buf b = {0};
	char *why = NULL;
	json_t *doc = NULL;
	if (data_read("gpus.json", &b, &why)) {
		json_error_t err;
		doc = json_loadb(b.data, b.len, 0, &err);
	}
	free(why);
	buf_free(&b);
	return doc;
}

static char *dup_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? xstrdup(s) : NULL;
}

void fit_peak_lookup(const char *name, struct fit_peak *p)
{
	memset(p, 0, sizeof *p);
	json_t *doc = name ? load_table() : NULL;
	size_t i, best_len = 0;
	json_t *g, *best = NULL;
	json_array_foreach(json_object_get(doc, "gpus"), i, g) {
		size_t k, len = 0;
		json_t *m;
		bool all = true;
		json_array_foreach(json_object_get(g, "match"), k, m) {
			const char *want = json_string_value(m);
			if (!want || !strcasestr(name, want))
				all = false;
			else
				len += strlen(want);
		}
		if (all && len > best_len) {
			best = g;
			best_len = len;
		}
	}
	if (best) {
		p->found = true;
		p->name = dup_str(best, "name");
		p->host_link = dup_str(best, "host_link");
		p->source = dup_str(best, "source");
		p->memory_gbps = json_number_value(json_object_get(best, "memory_gbps"));
		p->host_gbps = json_number_value(json_object_get(best, "host_gbps"));
		p->nvlink_gbps = json_number_value(json_object_get(best, "nvlink_gbps"));
	}
	json_decref(doc);
}

void fit_peak_free(struct fit_peak *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->host_link);
	free(p->source);
	memset(p, 0, sizeof *p);
}

double fit_pcie_gbps(int gen, int width)
{
	if (gen < 1 || width < 1)
		return NAN;
	json_t *doc = load_table();
	char key[16];
	snprintf(key, sizeof key, "%d", gen);
	json_t *v = json_object_get(json_object_get(json_object_get(doc, "pcie"), "lane_gbps"), key);
	double rate = json_is_number(v) ? json_number_value(v) * width : NAN;
	json_decref(doc);
	return rate;
}
