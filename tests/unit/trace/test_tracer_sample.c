/* The sampler's decision (src/trace/tracer/sample.c), tick by tick on a
 * clock and launch count set here as a launch loop would leave them: when
 * the sampled stretch starts, when its windows open and close (the first
 * within 90 ms, also for a sparse period of a second), and when it ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "trace/tracer/tracer.h"

#define MS 1000000ull
#define TICK (5 * MS)

struct run {
	struct sample_clock c;
	uint64_t now, launches;
	uint64_t opened[16], closed[16]; /* when each window opened / closed */
	int nopened, nclosed, ended;
};

static void start(struct run *r, uint64_t period_ms, uint64_t on_ms)
{
	memset(&t, 0, sizeof t);
	t.sample = 1;
	t.sample_rate = 20000;
	t.sample_period_ns = period_ms * MS;
	t.sample_on_ns = on_ms * MS;
	memset(r, 0, sizeof *r);
	r->now = 1000 * MS;
	r->c.last_t = r->now;
}

/* One tick at `per_tick` launches since the last; as the sampler does, a
 * change moves the phase on (records off: odd, on: even). */
static int tick(struct run *r, uint64_t per_tick)
{
	r->now += TICK;
	r->launches += per_tick;
	int change = sample_tick_locked(&r->c, r->now, r->launches);
	if (change >= 0)
		t.phase++;
	if (change == 1 && t.sampling && r->nopened < 16)
		r->opened[r->nopened++] = r->now;
	if (change == 0 && r->nclosed < 16)
		r->closed[r->nclosed++] = r->now;
	if (change == 1 && !t.sampling)
		r->ended = 1;
	return change;
}

static void test_sampling_starts_after_four_fast_ticks(void **state)
{
	(void)state;
	struct run r;
	start(&r, 100, 10);
	/* 50 launches in 5 ms: 10,000 a second, under the rate */
	for (int i = 0; i < 10; i++)
		assert_int_equal(tick(&r, 50), -1);
	assert_false(t.sampling);
	/* 500 in 5 ms: 100,000 a second */
	for (int i = 0; i < 3; i++)
		assert_int_equal(tick(&r, 500), -1);
	assert_int_equal(tick(&r, 500), 0); /* the records off */
	assert_true(t.sampling);
	assert_int_equal(t.sampling_since, r.now);
	assert_true(PHASE_ON(t.phase) == 0);
}

static void run_fast(struct run *r, uint64_t ms)
{
	for (uint64_t i = 0; i < ms / 5; i++)
		tick(r, 500);
}

static void test_windows_of_the_default_period(void **state)
{
	(void)state;
	struct run r;
	start(&r, 100, 10);
	run_fast(&r, 20); /* sampling from here */
	uint64_t since = r.now;
	run_fast(&r, 400);
	assert_true(r.nopened >= 3);
	assert_int_equal(r.opened[0] - since, 90 * MS);
	assert_int_equal(r.closed[1] - r.opened[0], 10 * MS); /* closed[0]: the start */
	assert_int_equal(r.opened[1] - r.closed[1], 90 * MS);
	assert_int_equal(t.sample_windows, (uint64_t)r.nopened);
	/* the recorded time: every window closed so far */
	assert_int_equal(t.sample_on_total, (uint64_t)(r.nclosed - 1) * 10 * MS);
}

static void test_sparse_period_opens_its_first_window_early(void **state)
{
	(void)state;
	struct run r;
	start(&r, 1000, 10);
	run_fast(&r, 20);
	uint64_t since = r.now;
	/* a stretch of 1.5 s: the first window within 90 ms, the next a second
	 * after it (less its 10 ms) */
	run_fast(&r, 1500);
	assert_int_equal(r.nopened, 2);
	assert_int_equal(r.opened[0] - since, 90 * MS);
	assert_int_equal(r.opened[1] - r.closed[1], 990 * MS);
}

static void test_a_slow_stretch_ends_sampling_and_a_new_one_starts_afresh(void **state)
{
	(void)state;
	struct run r;
	start(&r, 1000, 10);
	run_fast(&r, 20);
	run_fast(&r, 200); /* the first window opened and closed */
	assert_int_equal(r.nopened, 1);
	for (int i = 0; i < 19; i++)
		assert_int_equal(tick(&r, 10), -1);
	assert_int_equal(tick(&r, 10), 1); /* 20 slow ticks: every record again */
	assert_true(r.ended);
	assert_false(t.sampling);
	assert_true(PHASE_ON(t.phase));
	uint64_t first_since = t.sampling_since;
	run_fast(&r, 20);
	assert_true(t.sampling);
	assert_int_equal(t.sampling_since, first_since); /* the first stretch's start stays */
	uint64_t since = r.now;
	run_fast(&r, 100);
	assert_int_equal(r.nopened, 2);
	assert_int_equal(r.opened[1] - since, 90 * MS);
}

/* sample_on 0 (sample_window_ms=0, the default): the stretch starts and
 * ends as with windows, and no window opens in it. */
static void test_no_window_opens_when_windows_are_off(void **state)
{
	(void)state;
	struct run r;
	start(&r, 200, 0);
	run_fast(&r, 2000);
	assert_true(t.sampling);
	assert_int_equal(r.nclosed, 1); /* the stretch's start turned the records off */
	assert_int_equal(r.nopened, 0);
	assert_int_equal(t.sample_windows, 0);
	for (int i = 0; i < 20; i++)
		tick(&r, 10);
	assert_true(r.ended); /* slow again: every record, as with windows */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampling_starts_after_four_fast_ticks),
		cmocka_unit_test(test_windows_of_the_default_period),
		cmocka_unit_test(test_sparse_period_opens_its_first_window_early),
		cmocka_unit_test(test_a_slow_stretch_ends_sampling_and_a_new_one_starts_afresh),
		cmocka_unit_test(test_no_window_opens_when_windows_are_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
