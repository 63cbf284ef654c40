/* answer: the fit arithmetic — does the working set fit, how long do its
 * transfers take at the measured rates, what is the best end-to-end
 * speedup if GPU compute were free, and the verdict. Pure arithmetic on a
 * struct ceilings; the texts it needs (the context reserve, the pointer to
 * Dask) are in data/fit.json. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/data.h"
#include "core/util.h"
#include "fit.h"

const char *fit_verdict_name(enum fit_verdict v)
{
	switch (v) {
	case FIT_CANNOT_PAY: return "cannot pay";
	case FIT_ONLY_IF_RESIDENT: return "can pay only if the data stays on the device";
	case FIT_ROOM_TO_GAIN: return "room to gain";
	default: return "no verdict";
	}
}

struct texts {
	uint64_t reserve;
	char *too_big;
};

static void load_texts(struct texts *t)
{
	t->reserve = 512ull << 20;
	t->too_big = NULL;
	struct buf b = {0};
	char *why = NULL;
	if (data_read("fit.json", &b, &why)) {
		json_error_t err;
		json_t *doc = json_loadb(b.data, b.len, 0, &err);
		json_t *r = json_object_get(doc, "context_reserve_bytes");
		if (json_is_integer(r) && json_integer_value(r) >= 0)
			t->reserve = (uint64_t)json_integer_value(r);
		const char *tb = json_string_value(json_object_get(doc, "too_big"));
		t->too_big = tb ? xstrdup(tb) : NULL;
		json_decref(doc);
	}
	free(why);
	buf_free(&b);
}

/* Seconds to move bytes at the first-touch rate (measured at one size),
 * plus a copy's fixed latency (the pageable curve's time at its smallest
 * size), and never less than a copy of reused pageable memory takes: a
 * first touch does that copy's work and faults the pages in besides, so
 * for a few bytes it is not 0 µs, nor below pinned's. NAN when not
 * measured. */
static double fresh_seconds(const struct ceilings *c, int dir, uint64_t bytes)
{
	if (!c->have_first_touch[dir] || c->first_touch[dir].gbps <= 0)
		return NAN;
	enum ceil_kind kind = dir == 0 ? CEIL_H2D_PAGEABLE : CEIL_D2H_PAGEABLE;
	double latency = ceilings_copy_seconds(c, kind, 1), reused = ceilings_copy_seconds(c, kind, bytes);
	double t = (double)bytes / (c->first_touch[dir].gbps * 1e9) + (isnan(latency) ? 0 : latency);
	return !isnan(reused) && reused > t ? reused : t;
}

static double ratio(double t, double floor_s)
{
	return isnan(t) || isnan(floor_s) || floor_s <= 0 ? NAN : t / floor_s;
}

static char *times(double x)
{
	if (isnan(x))
		return xstrdup("?");
	return x >= 100 ? xasprintf("%.0f×", x) : x >= 10 ? xasprintf("%.1f×", x) : xasprintf("%.2f×", x);
}

void fit_answer_compute(const struct ceilings *c, uint64_t free_bytes, const struct fit_settings *s,
			struct fit_answer *a)
{
	struct texts t;
	load_texts(&t);
	a->temp_factor = s->temp_factor > 0 ? s->temp_factor : 3;
	a->min_speedup = s->min_speedup > 0 ? s->min_speedup : 2;
	a->out_bytes = s->out_bytes_set ? s->out_bytes : a->in_bytes;
	double need = (double)a->in_bytes * a->temp_factor + (double)t.reserve;
	a->need_bytes = need >= 1.8e19 ? UINT64_MAX : (uint64_t)need;
	a->free_bytes = free_bytes;
	a->fits = a->need_bytes <= free_bytes;
	a->in_pageable = a->in_bytes ? ceilings_copy_seconds(c, CEIL_H2D_PAGEABLE, a->in_bytes) : 0;
	a->out_pageable = a->out_bytes ? ceilings_copy_seconds(c, CEIL_D2H_PAGEABLE, a->out_bytes) : 0;
	a->in_pinned = a->in_bytes ? ceilings_copy_seconds(c, CEIL_H2D_PINNED, a->in_bytes) : 0;
	a->out_pinned = a->out_bytes ? ceilings_copy_seconds(c, CEIL_D2H_PINNED, a->out_bytes) : 0;
	a->in_fresh = a->in_bytes ? fresh_seconds(c, 0, a->in_bytes) : 0;
	a->out_fresh = a->out_bytes ? fresh_seconds(c, 1, a->out_bytes) : 0;
	a->overhead_s = c->launch_sync.n ? c->launch_sync.us * 1e-6 : c->sync.n ? c->sync.us * 1e-6 : 0;
	a->cpu_seconds = s->cpu_seconds >= 0 ? s->cpu_seconds : NAN;

	if (!a->fits) {
		/* a chunk: what fits with its temporaries, in whole rows of the
		 * largest array, rounded down to a MiB when it is that large */
		uint64_t usable = free_bytes > t.reserve ? free_bytes - t.reserve : 0;
		uint64_t chunk = (uint64_t)((double)usable / a->temp_factor);
		uint64_t row = 0, largest = 0;
		for (size_t i = 0; i < a->narrays; i++)
			if (a->arrays[i].bytes > largest) {
				largest = a->arrays[i].bytes;
				row = a->arrays[i].row_bytes;
			}
		if (chunk > (1ull << 20))
			chunk -= chunk % (1ull << 20);
		if (row && chunk >= row && a->narrays == 1) {
			a->chunk_rows = chunk / row;
			chunk = a->chunk_rows * row;
		}
		a->chunk_bytes = chunk;
		a->chunks = chunk ? (a->in_bytes + chunk - 1) / chunk : 0;
		a->too_big = t.too_big;
		t.too_big = NULL;
	}
	free(t.too_big);

	if (isnan(a->cpu_seconds)) {
		a->verdict = FIT_VERDICT_NONE;
		a->best_pageable = a->best_fresh = a->best_pinned = a->best_resident = NAN;
		return;
	}
	double T = a->cpu_seconds, S = a->min_speedup;
	a->best_pageable = ratio(T, a->in_pageable + a->out_pageable + a->overhead_s);
	a->best_fresh = ratio(T, a->in_fresh + a->out_fresh + a->overhead_s);
	a->best_pinned = ratio(T, a->in_pinned + a->out_pinned + a->overhead_s);
	a->best_resident = ratio(T, a->overhead_s);
	char *bp = times(a->best_pageable), *bq = times(a->best_pinned), *br = times(a->best_resident);
	char *need_s = times(S);
	if (!isnan(a->best_resident) && a->best_resident < S) {
		a->verdict = FIT_CANNOT_PAY;
		a->why = xasprintf("the CPU takes %.3g s, and one launch with a synchronize alone takes %.3g s: "
				   "even with the data on the device and free compute the GPU gains at most %s",
				   T, a->overhead_s, br);
	} else if (!a->fits && a->chunk_bytes == 0) {
		char *freeb = fit_bytes_text(a->free_bytes), *reserve = fit_bytes_text(t.reserve);
		a->verdict = FIT_CANNOT_PAY;
		a->why = xasprintf("not even a chunk of it fits: the GPU has %s free, and the CUDA context "
				   "alone needs %s", freeb, reserve);
		free(freeb);
		free(reserve);
	} else if (!a->fits) {
		if (!isnan(a->best_pinned) && a->best_pinned >= S) {
			a->verdict = FIT_ROOM_TO_GAIN;
			a->why = xasprintf("it does not fit, but streamed in chunks through pinned buffers the "
					   "transfers leave at most %s (pageable: %s)", bq, bp);
		} else {
			a->verdict = FIT_CANNOT_PAY;
			a->why = xasprintf("it does not fit on the GPU, so it must move every time, and moving it "
					   "leaves at most %s even through pinned buffers (%s needed)", bq, need_s);
		}
	} else if (!isnan(a->best_pageable) && a->best_pageable >= S) {
		a->verdict = FIT_ROOM_TO_GAIN;
		a->why = xasprintf("even moving the data in and out each time (pageable memory) leaves at most "
				   "%s; pinned memory, %s", bp, bq);
	} else if (!isnan(a->best_pinned) && a->best_pinned >= S) {
		a->verdict = FIT_ROOM_TO_GAIN;
		a->why = xasprintf("only with pinned host memory: moving the data each time from pageable "
				   "memory leaves at most %s, from pinned memory %s", bp, bq);
	} else {
		a->verdict = FIT_ONLY_IF_RESIDENT;
		a->why = xasprintf("moving the data in and out takes about as long as the CPU does (at best %s "
				   "pageable, %s pinned, %s needed): it pays only if the data stays on the GPU "
				   "across calls (then at most %s)", bp, bq, need_s, br);
	}
	free(bp);
	free(bq);
	free(br);
	free(need_s);
}

void fit_answer_free(struct fit_answer *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->narrays; i++) {
		free(a->arrays[i].label);
		free(a->arrays[i].dtype);
		free(a->arrays[i].shape);
	}
	free(a->arrays);
	free(a->why);
	free(a->too_big);
	memset(a, 0, sizeof *a);
}
