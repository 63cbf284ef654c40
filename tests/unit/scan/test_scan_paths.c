/* scan_paths, called as code calls it (no argv): the outcomes reach the sink
 * in input order, walk errors first and by path, unreadable files with the
 * reason, and the same findings with one thread or three, with the cache
 * cold and warm. Runs over real files in a temporary directory, with the
 * real knowledge data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/util.h"
#include "scan/cache.h"
#include "scan/kb.h"
#include "scan/scan.h"

struct seen {
	struct buf log;       /* "E path: message\n", "F path ok N\n" or "F path error\n" */
	size_t findings;
};

static void on_error(void *ctx, const char *path, const char *message)
{
	struct seen *s = ctx;
	buf_printf(&s->log, "E %s: %s\n", path, message);
}

static void on_file(void *ctx, const struct scan_file *sf)
{
	struct seen *s = ctx;
	if (!sf->ok) {
		buf_printf(&s->log, "F %s error\n", sf->path);
		return;
	}
	buf_printf(&s->log, "F %s ok", sf->path);
	for (size_t i = 0; i < sf->res.n; i++)
		buf_printf(&s->log, " %u:%s", sf->res.items[i].line, sf->res.items[i].rule->id);
	buf_putc(&s->log, '\n');
	s->findings += sf->res.n;
}

static char dir[64];

static void write_text(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fwrite(text, 1, strlen(text), f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/gpuopt-scan-paths-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char sub[96];
	snprintf(sub, sizeof sub, "%s/pkg", dir);
	mkdir(sub, 0755);
	write_text("a.py", "import numpy as np\nx = np.fft.fft(np.ones(8))\ny = np.linalg.svd(np.eye(3))\n");
	write_text("pkg/b.py", "import pandas as pd\ndf = pd.read_csv('x.csv')\nprint(df.groupby('k').sum())\n");
	write_text("pkg/bad.py", "x = '\xff\xfe not utf-8'\n");
	char cache_home[96];
	snprintf(cache_home, sizeof cache_home, "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cache_home, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* One scan of the test tree plus a missing path; the log is owned. */
static char *scan_once(const struct kb *kb, int jobs, bool cached, size_t *findings)
{
	char a[96], pkg[96], missing[96];
	snprintf(a, sizeof a, "%s/a.py", dir);
	snprintf(pkg, sizeof pkg, "%s/pkg", dir);
	snprintf(missing, sizeof missing, "%s/missing.py", dir);
	char *paths[] = {a, missing, pkg};
	struct seen s = {0};
	struct scan_options o = {.kb = kb, .jobs = jobs, .cache = cached ? cache_open(kb, false) : NULL};
	struct scan_sink sink = {.path_error = on_error, .file = on_file, .ctx = &s};
	struct scan_stats st;
	scan_paths(&o, paths, 3, &sink, &st);
	cache_close(o.cache);
	assert_int_equal(st.files, 3);
	assert_int_equal(st.path_errors, 1);
	*findings = s.findings;
	return buf_steal(&s.log);
}

static void test_outcomes_in_input_order(void **state)
{
	(void)state;
	char *why = NULL;
	struct kb *kb = kb_load(&why);
	assert_non_null(kb);
	size_t n1 = 0;
	char *log = scan_once(kb, 1, false, &n1);
	/* the walk error first, then the files in the order given (a directory's in name order) */
	char want_prefix[256];
	snprintf(want_prefix, sizeof want_prefix, "E %s/missing.py: ", dir);
	assert_memory_equal(log, want_prefix, strlen(want_prefix));
	char *fa = strstr(log, "/a.py ok"), *fbad = strstr(log, "/pkg/bad.py error"),
	     *fb = strstr(log, "/pkg/b.py ok");
	assert_non_null(fa);
	assert_non_null(fbad);
	assert_non_null(fb);
	assert_true(fa < fb && fb < fbad);
	assert_true(n1 >= 4);
	assert_non_null(strstr(fa, " 2:GPU1"));  /* np.fft.fft has a GPU path */
	/* three threads, cache cold then warm: the same outcomes */
	for (int round = 0; round < 2; round++) {
		size_t n3 = 0;
		char *log3 = scan_once(kb, 3, true, &n3);
		assert_string_equal(log3, log);
		assert_int_equal(n3, n1);
		free(log3);
	}
	free(log);
	kb_free(kb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcomes_in_input_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
