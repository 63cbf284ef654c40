/* sample.c: when --sample records. The sampler thread (inject.c) calls
 * sample_tick_locked every 5 ms with the launches counted so far; it decides
 * when the run enters its sampled stretch (launches faster than sample_rate a
 * second for four ticks), when each window of records opens and closes, and
 * when the stretch ends (under half the rate for 20 ticks). No CUPTI here:
 * the caller turns the records on or off as told. */
#include "trace/tracer/tracer.h"

/* The first window of a sampled stretch opens this soon (or at the period's
 * gap, if shorter), so that a stretch shorter than a sparse period (10 ms a
 * second) still records one. */
#define SAMPLE_FIRST_GAP_NS 90000000ull

int sample_tick_locked(struct sample_clock *c, uint64_t now, uint64_t launches)
{
	double rate = now > c->last_t ? (double)(launches - c->last_n) * 1e9 / (double)(now - c->last_t) : 0;
	c->last_n = launches;
	c->last_t = now;
	int on = PHASE_ON(t.phase);
	if (!t.sampling) {
		c->over = rate > (double)t.sample_rate ? c->over + 1 : 0;
		if (c->over < 4)
			return -1;
		c->over = c->under = 0;
		t.sampling = 1;
		if (!t.sampling_since)
			t.sampling_since = now;
		c->window = now;
		c->gap = t.sample_period_ns - t.sample_on_ns;
		if (c->gap > SAMPLE_FIRST_GAP_NS)
			c->gap = SAMPLE_FIRST_GAP_NS;
		return 0;
	}
	c->under = rate < (double)t.sample_rate / 2 ? c->under + 1 : 0;
	if (on && now - c->window >= t.sample_on_ns) {
		t.sample_on_total += now - c->window;
		c->window = now;
		return 0;
	}
	if (!on && c->under >= 20) {
		t.sampling = 0; /* slow again: record every kernel */
		c->over = 0;
		return 1;
	}
	if (!on && t.sample_on_ns && now - c->window >= c->gap) { /* 0: no windows */
		t.sample_windows++;
		c->window = now;
		c->gap = t.sample_period_ns - t.sample_on_ns;
		return 1;
	}
	return -1;
}
