/* The scan cache keeps what a file's scan said about itself, not only its
 * findings: a file whose flow analysis ran out of its work budget reads
 * back from the cache as not fully analysed, with the line, cell and
 * function where it stopped (issue 25); one that did not reads back with
 * none. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "scan/cache.h"
#include "core/util.h"

static void test_budget_stop_round_trips(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpuopt-test-cache-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("XDG_CACHE_HOME", dir, 1);
	char *why = NULL;
	struct kb *kb = kb_load(&why);
	assert_non_null(kb);
	struct cache *c = cache_open(kb, true);
	assert_non_null(c);
	const char *codes[] = {"import numpy as np\nx = np.fft.fft(np.ones(8))\n",
			       "import numpy as np\ny = np.fft.ifft(np.ones(8))\n"};
	for (int k = 0; k < 2; k++) {
		struct scan_result res = scan_snippet(kb, "work.py", codes[k]);
		assert_int_equal(res.budget_line, 0);
		if (k == 0) { /* as the flow model leaves it when the budget runs out */
			res.budget_line = 12;
			res.budget_cell = 0;
			res.budget_func = xstrdup("Trainer.step");
		}
		struct source src;
		assert_true(source_from_python("work.py", codes[k], strlen(codes[k]), &src, &why));
		cache_put(c, &src, NULL, &res);
		struct scan_result back;
		assert_true(cache_get(c, &src, NULL, &back));
		assert_int_equal(back.n, res.n);
		assert_int_equal(back.budget_line, k == 0 ? 12 : 0);
		assert_int_equal(back.budget_cell, 0);
		if (k == 0)
			assert_string_equal(back.budget_func, "Trainer.step");
		else
			assert_null(back.budget_func);
		scan_result_free(&back);
		scan_result_free(&res);
		source_free(&src);
	}
	cache_close(c);
	kb_free(kb);
	char *rm = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
	free(rm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_stop_round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
