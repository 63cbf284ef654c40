/* verdict_decide, the keep / revise / reject table, both ways for each row:
 * a crash, a mismatch, slower, no difference, faster, faster with costly
 * waste or fallbacks, and the limiting factor each names, weighed against
 * the GPU phase (problem size, the waste named, a host-bound idle GPU, the
 * algorithm). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/data.h"
#include "try/verdict.h"

/* The thresholds and factors as shipped (data/try.json's "verdict"). */
static json_t *thresholds;

static struct verdict_in ok_run(void)
{
	struct verdict_in in;
	memset(&in, 0, sizeof in);
	in.available = true;
	in.ran = true;
	in.benched = true;
	in.min_effect = 0.05;
	in.base_median_s = 5;
	return in;
}

static void expect(const struct verdict_in *in, enum try_verdict v, const char *factor, const char *words)
{
	struct verdict_out out;
	verdict_decide(in, thresholds, &out);
	assert_int_equal(out.verdict, v);
	if (factor)
		assert_string_equal(out.factor, factor);
	else
		assert_null(out.factor);
	if (!strstr(out.reason, words))
		fail_msg("'%s' not in: %s", words, out.reason);
	free(out.factor);
	free(out.reason);
}

static void test_table(void **state)
{
	(void)state;
	struct verdict_in in = ok_run();
	in.available = false;
	in.install = "pip install cuml-cu13";
	expect(&in, TRY_UNAVAILABLE, NULL, "install it with: pip install cuml-cu13");

	in = ok_run();
	in.ran = false;
	in.crash = "exited with status 1: ImportError: libcuda.so.1";
	expect(&in, TRY_REJECT, "crash", "exited with status 1");
	in.crash_no_gpu = true;
	expect(&in, TRY_REJECT, "no usable GPU", "needs an NVIDIA GPU");

	in = ok_run();
	in.verified = 1;
	in.mismatch = "x.npy: 3 of 10 elements differ";
	expect(&in, TRY_REJECT, "wrong output", "x.npy: 3 of 10 elements differ");

	in = ok_run();
	in.bench = "slower";
	in.speedup = 0.5, in.lo = 0.45, in.hi = 0.55;
	expect(&in, TRY_REJECT, "the algorithm", "takes longer this way");
	in.gpu = true;
	in.base_median_s = 0.2; /* a GPU candidate slower on a 0.2 s problem: its size */
	expect(&in, TRY_REJECT, "problem size", "the whole baseline takes 200.0 ms");
	in.base_median_s = 5;
	expect(&in, TRY_REJECT, "the algorithm", "does not gain on this device");
	/* traced: 26 ms of GPU work against a 5 s baseline is start-up, not the algorithm */
	in.traced = true;
	in.trace_wall_s = 10.74;
	in.gpu_window_s = 0.026;
	in.gpu_busy_s = 0.02;
	expect(&in, TRY_REJECT, "problem size", "10.71 s of its 10.74 s is start-up");
	/* start-up shorter than the baseline, a short phase with nothing wasted in it */
	in.trace_wall_s = 5.5;
	in.gpu_window_s = 1.0;
	expect(&in, TRY_REJECT, "problem size", "its GPU work takes 1.00 s, less than the baseline's 5.00 s");
	in.trace_wall_s = 10.74;
	/* a phase longer than the baseline, the GPU busy through it, nothing named: the algorithm */
	in.gpu_window_s = 6.0;
	in.gpu_busy_s = 5.5;
	expect(&in, TRY_REJECT, "the algorithm", "the GPU was busy 5.50 s of its 6.00 s GPU phase");
	/* ... idle most of it: host-bound, the line that held the host named */
	in.gpu_busy_s = 0.045;
	in.host_line = "port.py:31";
	expect(&in, TRY_REJECT, "launch granularity", "idle 99% of its 6.00 s GPU phase (busy 45.0 ms)");
	expect(&in, TRY_REJECT, "launch granularity", "most of all from port.py:31");
	/* waste is weighed against the GPU phase, not the whole run (start-up included): 3,000
	 * scalar copies costing 0.9 s of a 6 s phase, 8% of a 10.7 s run, are the limit */
	struct waste rt = {"roundtrip-storm", "port.py:33", NULL, 0.9 / 10.74, 0.15};
	in.waste = &rt;
	in.nwaste = 1;
	expect(&in, TRY_REJECT, "transfers", "roundtrip-storm at port.py:33 costing 15% of its 6.00 s GPU phase");
	/* a phase shorter than the baseline that waste fills, with start-up leaving room
	 * to win (set5's diffusion_pool_free): the waste, not the problem's size */
	in.base_median_s = 7.0;
	in.trace_wall_s = 8.0;
	expect(&in, TRY_REJECT, "transfers", "roundtrip-storm at port.py:33 costing 15% of its 6.00 s GPU phase");
	/* ... waste that is small in seconds beside the baseline, and start-up alone as
	 * long as the baseline: nothing in the GPU phase can win */
	in.base_median_s = 10.0;
	in.trace_wall_s = 16.5;
	expect(&in, TRY_REJECT, "problem size", "10.50 s of its 16.50 s is start-up");
	in.base_median_s = 5;
	in.trace_wall_s = 10.74;
	rt.phase_share = 0.05; /* too small to be the limit: the idle GPU is */
	expect(&in, TRY_REJECT, "launch granularity", "port.py:31");
	in.nwaste = 0;
	in.traced = false;

	in = ok_run();
	in.bench = "no difference";
	in.speedup = 1.01, in.lo = 0.98, in.hi = 1.04;
	expect(&in, TRY_REVISE, "the algorithm", "no faster beyond 5%");
	in.gpu = true;
	struct waste w = {"roundtrip-storm", "solve.py:12", "move the norm check out of the loop", 0.4, 0.5};
	in.waste = &w;
	in.nwaste = 1;
	expect(&in, TRY_REVISE, "the algorithm", "no faster beyond 5%"); /* untraced: waste not read */
	in.traced = true;
	in.trace_wall_s = 8, in.gpu_window_s = 6, in.gpu_busy_s = 1;
	expect(&in, TRY_REVISE, "transfers", "roundtrip-storm at solve.py:12 costing 50% of its 6.00 s GPU phase");

	in = ok_run();
	in.bench = "faster";
	in.speedup = 3, in.lo = 2.8, in.hi = 3.2;
	expect(&in, TRY_KEEP, NULL, "the whole interval above 1.05x");
	in.waste = &w;
	in.nwaste = 1;
	expect(&in, TRY_REVISE, "transfers", "but the trace names roundtrip-storm at solve.py:12 "
		"costing 40% of the run");
	/* an accelerator mode's synchronizes and copies are its library's: kept, and said */
	in.accel = true;
	expect(&in, TRY_KEEP, NULL, "costing 40% of the run, inside the accelerated library");
	in.accel = false;
	w.share = 0.02; /* small waste does not block keep */
	expect(&in, TRY_KEEP, NULL, "same outputs and faster");
	in.nwaste = 0;
	in.fallbacks = 30;
	in.gpu_calls = 10;
	in.fallback_top = "KMeans.fit: callable init";
	expect(&in, TRY_REVISE, "unsupported-op fallback", "30 of 40 observed calls still fall back");
	in.fallbacks = 1;
	expect(&in, TRY_KEEP, NULL, "1 call fell back to the CPU");

	in = ok_run();
	in.bench = "cannot conclude: too few runs";
	expect(&in, TRY_REVISE, "measurement", "cannot conclude: too few runs");
}

int main(void)
{
	struct buf b = {0};
	char *why = NULL;
	if (!data_read("try.json", &b, &why)) {
		fprintf(stderr, "try.json: %s\n", why);
		return 1;
	}
	json_t *doc = json_loadb(b.data, b.len, 0, NULL);
	buf_free(&b);
	thresholds = json_object_get(doc, "verdict");
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	json_decref(doc);
	return rc;
}
