/* verdict_decide, the keep / revise / reject table, both ways for each row:
 * a crash, a mismatch, slower, no difference, faster, faster with costly
 * waste or fallbacks, and the limiting factor each names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "try/verdict.h"

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
	verdict_decide(in, NULL, &out);
	assert_int_equal(out.verdict, v);
	if (factor)
		assert_string_equal(out.factor, factor);
	else
		assert_null(out.factor);
	assert_non_null(strstr(out.reason, words));
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

	in = ok_run();
	in.bench = "no difference";
	in.speedup = 1.01, in.lo = 0.98, in.hi = 1.04;
	expect(&in, TRY_REVISE, "the algorithm", "no faster beyond 5%");
	in.gpu = true;
	struct waste w = {"roundtrip-storm", "solve.py:12", "move the norm check out of the loop", 0.4};
	in.waste = &w;
	in.nwaste = 1;
	expect(&in, TRY_REVISE, "transfers", "roundtrip-storm at solve.py:12 costing 40%");

	in = ok_run();
	in.bench = "faster";
	in.speedup = 3, in.lo = 2.8, in.hi = 3.2;
	expect(&in, TRY_KEEP, NULL, "the whole interval above 1.05x");
	in.waste = &w;
	in.nwaste = 1;
	expect(&in, TRY_REVISE, "transfers", "faster, speedup 3x");
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
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_table)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
