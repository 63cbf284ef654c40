/* verify_paths, called as code calls it (options struct, no argv), on two
 * directories of real files that numpy and Python's csv module wrote: each
 * pair is compared by relative path, a difference beyond tolerance fails
 * and passes once the tolerance allows it, a file only in the candidate is
 * a notice, and a missing reference is an error item. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "verify/verify.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gpuopt-verify-paths-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/python3 -c \""
		 "import numpy as np, os, csv\n"
		 "d = '%s'\n"
		 "for side in ('ref', 'cand'): os.makedirs(d + '/' + side + '/sub')\n"
		 "x = np.linspace(0, 1, 1000, dtype=np.float32)\n"
		 "np.save(d + '/ref/a.npy', x)\n"
		 "y = x.copy(); y[17] += 1e-3\n"
		 "np.save(d + '/cand/a.npy', y)\n"
		 "for side in ('ref', 'cand'):\n"
		 "    w = csv.writer(open(d + '/' + side + '/sub/t.csv', 'w', newline=''))\n"
		 "    w.writerows([['id', 'v'], [1, 0.5], [2, 0.25]])\n"
		 "np.save(d + '/cand/extra.npy', x)\n"
		 "\"", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const struct vitem *item(const struct verify_report *r, const char *name)
{
	for (size_t i = 0; i < r->items.len; i++) {
		const struct vitem *it = r->items.items[i];
		if (strcmp(it->name, name) == 0)
			return it;
	}
	return NULL;
}

static void test_directories(void **state)
{
	(void)state;
	char ref[96], cand[96];
	snprintf(ref, sizeof ref, "%s/ref", dir);
	snprintf(cand, sizeof cand, "%s/cand", dir);
	struct verify_opts o = {.equal_nan = true, .show = 5};
	struct verify_report *r = verify_paths(&o, ref, cand);
	const struct vitem *a = item(r, "a.npy"), *t = item(r, "sub/t.csv");
	assert_non_null(a);
	assert_non_null(t);
	assert_int_equal(a->status, V_FAIL);
	assert_int_equal(a->kind, V_ARRAY);
	assert_int_equal(t->status, V_PASS);
	assert_int_equal(t->kind, V_TABLE);
	assert_int_equal(r->notices.len, 1);
	assert_non_null(strstr(r->notices.items[0], "only in the candidate"));
	assert_non_null(strstr(r->notices.items[0], "extra.npy"));
	assert_int_equal(verify_exit_code(r), 1);
	verify_report_free(r);

	/* a tolerance that allows 1e-3 passes it */
	o.atol_set = true;
	o.atol = 2e-3;
	r = verify_paths(&o, ref, cand);
	assert_int_equal(item(r, "a.npy")->status, V_PASS);
	assert_int_equal(verify_exit_code(r), 0);
	verify_report_free(r);
}

static void test_missing_reference(void **state)
{
	(void)state;
	char ref[96], cand[96];
	snprintf(ref, sizeof ref, "%s/nothing-here.npy", dir);
	snprintf(cand, sizeof cand, "%s/cand/a.npy", dir);
	struct verify_opts o = {.equal_nan = true};
	struct verify_report *r = verify_paths(&o, ref, cand);
	assert_int_equal(r->items.len, 1);
	const struct vitem *it = r->items.items[0];
	assert_int_equal(it->status, V_ERROR);
	assert_non_null(strstr(it->error, "nothing-here.npy"));
	assert_int_equal(verify_exit_code(r), 2);
	verify_report_free(r);
	verify_report_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directories),
		cmocka_unit_test(test_missing_reference),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
