/* bench_run, called as code calls it (a settings struct, no argv), on real
 * commands: a clearly faster candidate is "faster" with an interval above
 * the minimum effect, a missing program is a bad command before anything
 * runs, and a failing run stops the benchmark. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "bench/bench.h"

static struct bench_settings quick(void)
{
	struct bench_settings s;
	memset(&s, 0, sizeof s);
	s.warmup = 1;
	s.min_runs = 8;
	s.max_runs = 8;
	s.precision = 0.02;
	s.min_effect = 0.05;
	s.seed = 1;
	s.resamples = 2000;
	s.python = "/nonexistent/python"; /* the environment record says it is missing */
	s.output = OUTPUT_NULL;
	return s;
}

static void test_faster_candidate(void **state)
{
	(void)state;
	struct bench_settings s = quick();
	char *cmds[] = {"sleep 0.06", "sleep 0.01"};
	struct bench_result *r = bench_run(&s, cmds, 2);
	assert_int_equal(r->status, BENCH_OK);
	assert_int_equal(r->ngroups, 1);
	const struct bench_group *g = &r->groups[0];
	assert_int_equal(g->ncmds, 2);
	assert_int_equal(g->rounds, 8);
	assert_int_equal(g->cmds[0].measured, 8);
	assert_string_equal(g->cmp[0].verdict, "faster");
	assert_true(g->cmp[0].conclusive);
	assert_true(g->cmp[0].speedup.lo > 1.05);
	assert_true(g->cmp[0].speedup.estimate > 2 && g->cmp[0].speedup.estimate < 12);
	assert_non_null(r->env);
	bench_result_free(r);
}

static void test_missing_program_runs_nothing(void **state)
{
	(void)state;
	struct bench_settings s = quick();
	char *cmds[] = {"true", "no-such-program-gpuopt-test --flag"};
	struct bench_result *r = bench_run(&s, cmds, 2);
	assert_int_equal(r->status, BENCH_BAD_COMMAND);
	assert_null(r->env); /* nothing was run, not even the environment probe */
	bench_result_free(r);
}

static void test_failing_run_stops(void **state)
{
	(void)state;
	struct bench_settings s = quick();
	char *cmds[] = {"true", "false"};
	struct bench_result *r = bench_run(&s, cmds, 2);
	assert_int_equal(r->status, BENCH_RUN_FAILED);
	bench_result_free(r);
	bench_result_free(NULL);
}

/* Each command starts in its own directory, and a relative program path
 * is found there. */
static void test_commands_start_in_their_directories(void **state)
{
	(void)state;
	char a[] = "/tmp/gpuopt-bench-cwd-XXXXXX", b[] = "/tmp/gpuopt-bench-cwd-XXXXXX";
	assert_non_null(mkdtemp(a));
	assert_non_null(mkdtemp(b));
	char path[128];
	snprintf(path, sizeof path, "%s/probe.sh", a);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\npwd >>runs.txt\n", f);
	fclose(f);
	chmod(path, 0755);
	struct bench_settings s = quick();
	s.min_runs = s.max_runs = 3;
	char *cwds[] = {a, b};
	s.cwds = cwds;
	char *cmds[] = {"./probe.sh", "sh -c 'pwd >>runs.txt'"};
	struct bench_result *r = bench_run(&s, cmds, 2);
	assert_int_equal(r->status, BENCH_OK);
	bench_result_free(r);
	for (int k = 0; k < 2; k++) {
		const char *d = k ? b : a;
		snprintf(path, sizeof path, "%s/runs.txt", d);
		f = fopen(path, "r");
		assert_non_null(f);
		char line[128];
		int n = 0;
		while (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = 0;
			assert_string_equal(line, d);
			n++;
		}
		fclose(f);
		assert_int_equal(n, 4); /* a warm-up and three measured runs */
	}
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", a, b);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faster_candidate),
		cmocka_unit_test(test_missing_program_runs_nothing),
		cmocka_unit_test(test_failing_run_stops),
		cmocka_unit_test(test_commands_start_in_their_directories),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
