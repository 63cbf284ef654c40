/* fit: see fit.h. This file strings the steps together — the working set,
 * the GPUs (gpuinfo), the cache or a measurement, Python's own latency, the
 * peaks, the answer — and writes the result as JSON. */
#include "fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/data.h"
#include "core/util.h"
#include "core/version.h"
#include "gpu/gpuinfo.h"
#include "gpu/sysinfo.h"
#include "measure.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *jdup(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? xstrdup(s) : NULL;
}

static void gpu_link(struct fit_gpu *g, json_t *dev)
{
	g->link_gbps = NAN;
	json_t *pcie = json_object_get(dev, "pcie");
	json_t *gen = json_object_get(pcie, "generation"), *width = json_object_get(pcie, "width");
	json_t *maxgen = json_object_get(pcie, "max_generation");
	if (!json_is_integer(gen) || !json_is_integer(width))
		return;
	/* an idle GPU lowers its link's generation to save power: the link's
	 * rate is that of the generation it runs at under load, its maximum */
	int g_now = (int)json_integer_value(gen);
	int g_max = json_is_integer(maxgen) ? (int)json_integer_value(maxgen) : g_now;
	int w = (int)json_integer_value(width);
	g->link = xasprintf("PCIe Gen%d x%d", g_max, w);
	g->link_gbps = fit_pcie_gbps(g_max, w);
}

static void python_latency(const struct fit_settings *s, struct ceilings *c)
{
	struct buf script = {0};
	char *why = NULL;
	if (!data_read("probes/fit_launch.py", &script, &why)) {
		free(why);
		buf_free(&script);
		return;
	}
	json_t *rec = sysinfo_python_probe(s->python, script.data, "1000", 120, 0);
	buf_free(&script);
	size_t i;
	json_t *ev;
	json_array_foreach(json_object_get(rec, "other"), i, ev) {
		const char *via = json_string_value(json_object_get(ev, "via"));
		json_t *op = json_object_get(ev, "op_us"), *sync = json_object_get(ev, "op_sync_us");
		size_t n = json_array_size(op);
		if (!via || n == 0 || n != json_array_size(sync) || n > 1000)
			continue;
		double *a = xcalloc(n, sizeof *a), *b = xcalloc(n, sizeof *b);
		bool ok = true;
		for (size_t k = 0; k < n; k++) {
			a[k] = json_number_value(json_array_get(op, k));
			b[k] = json_number_value(json_array_get(sync, k));
			ok &= json_is_number(json_array_get(op, k)) && json_is_number(json_array_get(sync, k));
		}
		if (ok) {
			struct ceil_time *t[2] = {&c->python_op, &c->python_op_sync};
			double *x[2] = {a, b};
			for (int k = 0; k < 2; k++) {
				double mean = 0, var = 0;
				for (size_t j = 0; j < n; j++)
					mean += x[k][j] / (double)n;
				for (size_t j = 0; j < n; j++)
					var += (x[k][j] - mean) * (x[k][j] - mean) / (double)(n > 1 ? n - 1 : 1);
				double *sorted = xcalloc(n, sizeof *sorted);
				memcpy(sorted, x[k], n * sizeof *sorted);
				for (size_t p = 1; p < n; p++) /* n is small */
					for (size_t q = p; q > 0 && sorted[q] < sorted[q - 1]; q--) {
						double tmp = sorted[q];
						sorted[q] = sorted[q - 1];
						sorted[q - 1] = tmp;
					}
				t[k]->us = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
				t[k]->cv = mean > 0 ? sqrt(var) / mean : 0;
				t[k]->n = (unsigned)n;
				free(sorted);
			}
			free(c->python_via);
			free(c->python_interpreter);
			c->python_via = xstrdup(via);
			c->python_interpreter = xstrdup(s->python);
		}
		free(a);
		free(b);
	}
	json_decref(rec);
}

/* The GPUs of the record that the settings select. */
static void select_gpus(struct fit_result *r, const struct fit_settings *s)
{
	json_t *devs = json_object_get(r->gpuinfo, "devices");
	r->gpus = xcalloc(json_array_size(devs) + 1, sizeof *r->gpus);
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) {
		int index = (int)json_integer_value(json_object_get(d, "index"));
		if (s->gpu >= 0 && index != s->gpu)
			continue;
		struct fit_gpu *g = &r->gpus[r->ngpus++];
		g->index = index;
		g->name = jdup(d, "name");
		g->uuid = jdup(d, "uuid");
		json_t *freeb = json_object_get(d, "memory_free_bytes");
		g->memory_free_bytes = json_is_integer(freeb) ? (uint64_t)json_integer_value(freeb) : 0;
		gpu_link(g, d);
		fit_peak_lookup(g->name, &g->peak);
		if (!json_is_integer(json_object_get(d, "cuda_index")))
			g->error = xstrdup("CUDA does not see this GPU (CUDA_VISIBLE_DEVICES?)");
	}
}

static json_t *device_of(const struct fit_result *r, int index)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(r->gpuinfo, "devices"), i, d)
		if (json_integer_value(json_object_get(d, "index")) == index)
			return d;
	return NULL;
}

static void measure_gpus(struct fit_result *r, const struct fit_settings *s)
{
	const char *driver = json_string_value(json_object_get(r->gpuinfo, "driver_version"));
	const char *cuda_driver = json_string_value(json_object_get(r->gpuinfo, "cuda_driver_version"));
	struct measure_target *targets = xcalloc(r->ngpus + 1, sizeof *targets);
	size_t *which = xcalloc(r->ngpus + 1, sizeof *which);
	size_t n = 0;
	for (size_t i = 0; i < r->ngpus; i++) {
		struct fit_gpu *g = &r->gpus[i];
		if (g->error)
			continue;
		g->cache_path = ceilings_cache_path(g->uuid);
		if (!s->refresh) {
			char *why = NULL;
			enum ceil_status st = ceilings_load_cached(g->uuid, driver, &g->ceil, &why);
			if (st == CEIL_OK) {
				g->measured = true;
				g->source = xasprintf("cached (measured %s)", g->ceil.measured_at);
				free(why);
				continue;
			}
			if (st != CEIL_MISSING)
				g->cache_note = xasprintf("measured again: the cached ceilings are %s (%s)",
							  st == CEIL_STALE ? "stale" : "damaged", why);
			free(why);
		}
		json_t *d = device_of(r, g->index);
		targets[n] = (struct measure_target){
			.cuda_index = (int)json_integer_value(json_object_get(d, "cuda_index")),
			.uuid = g->uuid, .name = g->name,
			.pci_bus_id = json_string_value(json_object_get(d, "pci_bus_id"))};
		which[n++] = i;
	}
	if (n) {
		struct measure_opts o = {
			.trials = s->trials ? s->trials : s->quick ? 5 : 7,
			.max_bytes = s->max_bytes ? s->max_bytes : s->quick ? (256ull << 20) : (1ull << 30),
			.step = s->quick ? 16 : 4,
			.peers = s->peers,
			.progress = s->progress,
			.timeout_s = s->timeout_s > 0 ? s->timeout_s : 600,
		};
		struct ceilings *out = xcalloc(n, sizeof *out);
		char **errors = xcalloc(n, sizeof *errors);
		char *why = NULL;
		double t0 = now_s();
		bool any = measure_run(&o, targets, n, driver, cuda_driver, out, errors, &why);
		r->measure_s = now_s() - t0;
		for (size_t k = 0; k < n; k++) {
			struct fit_gpu *g = &r->gpus[which[k]];
			if (any && out[k].gpu_uuid) {
				g->ceil = out[k];
				g->measured = true;
				g->source = xstrdup("measured now");
				char *err = NULL;
				if (!ceilings_save_cached(&g->ceil, &err)) {
					free(g->cache_note);
					g->cache_note = xasprintf("not cached: %s", err);
				}
				free(err);
			} else {
				g->error = xstrdup(errors[k] ? errors[k] : why ? why : "not measured");
			}
			free(errors[k]);
		}
		free(out);
		free(errors);
		free(why);
	}
	free(targets);
	free(which);
	if (s->python) {
		for (size_t i = 0; i < r->ngpus; i++) {
			struct fit_gpu *g = &r->gpus[i];
			if (!g->measured ||
			    (g->ceil.python_interpreter && strcmp(g->ceil.python_interpreter, s->python) == 0))
				continue;
			python_latency(s, &g->ceil);
			char *err = NULL;
			if (g->ceil.python_via && !ceilings_save_cached(&g->ceil, &err)) {
				free(g->cache_note);
				g->cache_note = xasprintf("not cached: %s", err);
			}
			free(err);
			break; /* CuPy / torch time the current device: the first GPU */
		}
	}
}

struct fit_result *fit_run(const struct fit_settings *s)
{
	struct fit_result *r = xcalloc(1, sizeof *r);
	char *why = NULL;
	if (!fit_working_set(s, &r->answer, &why)) {
		r->input_error = why;
		return r;
	}
	if (s->ceilings_file) {
		r->gpus = xcalloc(1, sizeof *r->gpus);
		struct fit_gpu *g = &r->gpus[0];
		r->ngpus = 1;
		g->index = -1;
		if (!ceilings_read_file(s->ceilings_file, &g->ceil, &why)) {
			r->input_error = why;
			return r;
		}
		g->measured = true;
		g->name = g->ceil.gpu_name ? xstrdup(g->ceil.gpu_name) : NULL;
		g->uuid = xstrdup(g->ceil.gpu_uuid);
		g->source = xasprintf("read from %s (measured %s)", s->ceilings_file, g->ceil.measured_at);
		g->memory_free_bytes = g->ceil.memory_free_bytes;
		g->link_gbps = NAN;
		fit_peak_lookup(g->name, &g->peak);
	} else {
		r->gpuinfo = gpuinfo_query(20);
		if (!json_is_true(json_object_get(r->gpuinfo, "found"))) {
			const char *reason = json_string_value(json_object_get(r->gpuinfo, "reason"));
			r->no_gpu = true;
			r->error = xasprintf("no NVIDIA GPU: %s", reason ? reason : "none found");
			return r;
		}
		select_gpus(r, s);
		if (r->ngpus == 0) {
			r->input_error = xasprintf("--gpu %d: this machine has no such GPU (%zu found)", s->gpu,
						   json_array_size(json_object_get(r->gpuinfo, "devices")));
			return r;
		}
		measure_gpus(r, s);
	}
	size_t best = r->ngpus;
	for (size_t i = 0; i < r->ngpus; i++) {
		struct fit_gpu *g = &r->gpus[i];
		if (!g->measured)
			continue;
		if (!g->memory_free_bytes)
			g->memory_free_bytes = g->ceil.memory_free_bytes;
		if (best == r->ngpus || g->memory_free_bytes > r->gpus[best].memory_free_bytes)
			best = i;
	}
	if (best == r->ngpus) {
		r->error = xstrdup(r->gpus[0].error ? r->gpus[0].error : "no GPU could be measured");
		return r;
	}
	if (r->answer.have) {
		r->answer.gpu = (int)best;
		fit_answer_compute(&r->gpus[best].ceil, r->gpus[best].memory_free_bytes, s, &r->answer);
	}
	return r;
}

void fit_result_free(struct fit_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ngpus; i++) {
		struct fit_gpu *g = &r->gpus[i];
		free(g->name);
		free(g->uuid);
		ceilings_free(&g->ceil);
		free(g->source);
		free(g->cache_path);
		free(g->cache_note);
		free(g->error);
		free(g->link);
		fit_peak_free(&g->peak);
	}
	free(r->gpus);
	fit_answer_free(&r->answer);
	json_decref(r->gpuinfo);
	free(r->input_error);
	free(r->error);
	free(r);
}

/* ---- JSON ---- */

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *gpu_json(const struct fit_gpu *g)
{
	json_t *o = json_object();
	json_object_set_new(o, "index", g->index >= 0 ? json_integer(g->index) : json_null());
	json_object_set_new(o, "name", str(g->name));
	json_object_set_new(o, "uuid", str(g->uuid));
	json_object_set_new(o, "source", str(g->source));
	json_object_set_new(o, "cache_path", str(g->cache_path));
	json_object_set_new(o, "cache_note", str(g->cache_note));
	json_object_set_new(o, "error", str(g->error));
	json_object_set_new(o, "memory_free_bytes", json_integer((json_int_t)g->memory_free_bytes));
	json_object_set_new(o, "link", json_pack("{s:o, s:o}", "name", str(g->link), "gbps_each_way",
						 num(g->link_gbps)));
	json_object_set_new(o, "published", g->peak.found
		? json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "name", g->peak.name, "memory_gbps",
			    num(g->peak.memory_gbps), "host_link", str(g->peak.host_link), "host_gbps_each_way",
			    num(g->peak.host_gbps), "nvlink_gbps", g->peak.nvlink_gbps > 0 ? num(g->peak.nvlink_gbps)
											   : json_null(),
			    "source", str(g->peak.source))
		: json_null());
	json_object_set_new(o, "ceilings", g->measured ? ceilings_to_json(&g->ceil) : json_null());
	return o;
}

static json_t *answer_json(const struct fit_answer *a)
{
	if (!a->have)
		return json_null();
	json_t *arrays = json_array();
	for (size_t i = 0; i < a->narrays; i++) {
		const struct fit_array *x = &a->arrays[i];
		json_array_append_new(arrays, json_pack("{s:s, s:o, s:o, s:I}", "label", x->label, "dtype",
							str(x->dtype), "shape", str(x->shape), "bytes",
							(json_int_t)x->bytes));
	}
	json_t *o = json_object();
	json_object_set_new(o, "arrays", arrays);
	json_object_set_new(o, "gpu", json_integer(a->gpu));
	json_object_set_new(o, "in_bytes", json_integer((json_int_t)a->in_bytes));
	json_object_set_new(o, "out_bytes", json_integer((json_int_t)a->out_bytes));
	json_object_set_new(o, "temp_factor", json_real(a->temp_factor));
	json_object_set_new(o, "need_bytes", json_integer((json_int_t)a->need_bytes));
	json_object_set_new(o, "free_bytes", json_integer((json_int_t)a->free_bytes));
	json_object_set_new(o, "fits", json_boolean(a->fits));
	json_object_set_new(o, "seconds", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		"in_pageable", num(a->in_pageable), "out_pageable", num(a->out_pageable),
		"in_pinned", num(a->in_pinned), "out_pinned", num(a->out_pinned),
		"in_fresh", num(a->in_fresh), "out_fresh", num(a->out_fresh),
		"launch_and_sync", num(a->overhead_s)));
	json_object_set_new(o, "cpu_seconds", num(a->cpu_seconds));
	json_object_set_new(o, "min_speedup", json_real(a->min_speedup));
	json_object_set_new(o, "best_speedup", json_pack("{s:o, s:o, s:o, s:o}",
		"pageable", num(a->best_pageable), "fresh_pageable", num(a->best_fresh),
		"pinned", num(a->best_pinned), "resident", num(a->best_resident)));
	json_object_set_new(o, "verdict", a->verdict == FIT_VERDICT_NONE ? json_null()
									 : json_string(fit_verdict_name(a->verdict)));
	json_object_set_new(o, "why", str(a->why));
	json_object_set_new(o, "chunk", a->fits ? json_null()
		: json_pack("{s:I, s:o, s:I, s:o}", "bytes", (json_int_t)a->chunk_bytes, "rows",
			    a->chunk_rows ? json_integer((json_int_t)a->chunk_rows) : json_null(), "chunks",
			    (json_int_t)a->chunks, "several_gpus", str(a->too_big)));
	return o;
}

json_t *fit_result_json(const struct fit_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "tool", json_string("gpuopt"));
	json_object_set_new(o, "version", json_string(GPUOPT_VERSION));
	json_object_set_new(o, "schema", json_string(FIT_SCHEMA));
	json_object_set_new(o, "error", str(r->input_error ? r->input_error : r->error));
	json_object_set_new(o, "no_gpu", json_boolean(r->no_gpu));
	json_object_set_new(o, "gpu_record", r->gpuinfo ? json_incref(r->gpuinfo) : json_null());
	json_object_set_new(o, "measure_s", num(r->measure_s));
	json_t *gpus = json_array();
	for (size_t i = 0; i < r->ngpus; i++)
		json_array_append_new(gpus, gpu_json(&r->gpus[i]));
	json_object_set_new(o, "gpus", gpus);
	json_object_set_new(o, "answer", answer_json(&r->answer));
	return o;
}
