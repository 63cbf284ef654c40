/* try_run, called as code calls it (a settings struct, no argv): a real
 * baseline and candidate (Debian's Python and numpy) in a project made
 * here, with no contract file: the candidate is verified, benchmarked and
 * kept; its steps are saved; a second call resumes from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "try/try.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gpuopt-try-run-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof path, "%s/slow.py", dir);
	FILE *f = fopen(path, "w");
	fputs("import numpy as np, time\ntime.sleep(0.3)\nnp.save('out.npy', np.arange(10) ** 2)\n", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/fast.py", dir);
	f = fopen(path, "w");
	fputs("import numpy as np\nnp.save('out.npy', np.arange(10) ** 2)\n", f);
	fclose(f);
	return chdir(dir);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_run_and_resume(void **state)
{
	(void)state;
	char *cands[] = {"/usr/bin/python3 fast.py", NULL};
	char *outs[] = {"out.npy", NULL};
	struct try_settings s = {.baseline = "/usr/bin/python3 slow.py", .python = "/usr/bin/python3",
				 .candidates = cands, .outputs = outs, .accelerators = 0, .trace = 0,
				 .max_time = 3, .min_runs = 5};
	struct try_result *r = try_run(&s);
	assert_int_equal(r->status, TRY_DONE);
	assert_int_equal(r->ncands, 1);
	assert_int_equal(r->cands[0].verdict, TRY_KEEP);
	assert_true(r->cands[0].have_speedup && r->cands[0].lo > 1.05);
	assert_int_equal(r->resumed_steps, 0);
	char path[160];
	snprintf(path, sizeof path, "%s/gpuopt-try/candidate-1.json", dir);
	assert_int_equal(access(path, R_OK), 0);
	try_result_free(r);
	/* the project was read-only to the runs, not to the caller afterwards
	 * (as root: an unprivileged user's namespace cannot be left) */
	if (geteuid() == 0) {
		snprintf(path, sizeof path, "%s/after.txt", dir);
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fclose(f);
		assert_int_equal(unlink(path), 0);
	}

	r = try_run(&s);
	assert_int_equal(r->status, TRY_DONE);
	assert_int_equal(r->resumed_steps, 4); /* environment, scan, baseline, the candidate */
	assert_int_equal(r->cands[0].verdict, TRY_KEEP);
	try_result_free(r);

	/* a baseline that does not run: said, and nothing else is tried */
	s.baseline = "/usr/bin/python3 missing.py";
	s.fresh = true;
	r = try_run(&s);
	assert_int_equal(r->status, TRY_BASELINE_FAILED);
	assert_non_null(strstr(r->message, "missing.py"));
	try_result_free(r);
	try_result_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_run_and_resume)};
	return cmocka_run_group_tests(tests, setup, teardown);
}
