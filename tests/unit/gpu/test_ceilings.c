/* ceilings: the cache format on the ceilings recorded on the H200
 * (tests/e2e/fixtures/h200_ceilings.json): decoding, encoding back, the
 * rate between and beyond measured sizes, refusals with their reasons, and
 * the cache — written whole, found again, stale under another driver or
 * gpuopt version, damaged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/fileio.h"
#include "core/version.h"
#include "gpu/ceilings.h"

#define FIXTURE GPUOPT_SOURCE_ROOT "/tests/e2e/fixtures/h200_ceilings.json"

static char *slurp(const char *path)
{
	struct buf b = {0};
	char *why = NULL;
	assert_true(read_file(path, 1 << 24, &b, &why));
	return buf_steal(&b);
}

static void load_fixture(struct ceilings *c)
{
	char *why = NULL;
	if (!ceilings_read_file(FIXTURE, c, &why))
		fail_msg("%s", why);
}

static void test_fixture_decodes(void **state)
{
	(void)state;
	struct ceilings c;
	load_fixture(&c);
	assert_non_null(strstr(c.gpu_name, "H200"));
	assert_true(strncmp(c.gpu_uuid, "GPU-", 4) == 0);
	assert_true(c.memory_total_bytes > (100ull << 30));
	for (int k = 0; k < CEIL_KINDS; k++) {
		assert_true(c.npoints[k] >= 8);
		assert_int_equal(c.curve[k][0].bytes, 4096);
		for (size_t i = 1; i < c.npoints[k]; i++)
			assert_true(c.curve[k][i].bytes > c.curve[k][i - 1].bytes);
	}
	/* what an H200 on PCIe Gen5 x16 gives pinned copies, and HBM3e device copies */
	size_t last = c.npoints[CEIL_H2D_PINNED] - 1;
	assert_true(c.curve[CEIL_H2D_PINNED][last].gbps > 45 && c.curve[CEIL_H2D_PINNED][last].gbps < 64);
	assert_true(c.have_d2d && c.d2d.gbps > 3000 && c.d2d.gbps < 4800);
	assert_true(c.have_first_touch[0] && c.have_first_touch[1]);
	assert_true(c.launch.n && c.sync.n && c.launch.us > 0.5 && c.sync.us < 50);
	assert_non_null(c.method);
	ceilings_free(&c);
}

static void test_encode_decode_round_trip(void **state)
{
	(void)state;
	struct ceilings a, b;
	load_fixture(&a);
	char *text = ceilings_encode(&a);
	char *why = NULL;
	assert_true(ceilings_decode(text, strlen(text), &b, &why));
	assert_string_equal(a.gpu_uuid, b.gpu_uuid);
	assert_string_equal(a.driver_version, b.driver_version);
	for (int k = 0; k < CEIL_KINDS; k++) {
		assert_int_equal(a.npoints[k], b.npoints[k]);
		for (size_t i = 0; i < a.npoints[k]; i++) {
			assert_int_equal(a.curve[k][i].bytes, b.curve[k][i].bytes);
			assert_true(fabs(a.curve[k][i].seconds - b.curve[k][i].seconds) <= 1e-6 * a.curve[k][i].seconds);
		}
	}
	char *again = ceilings_encode(&b);
	assert_string_equal(text, again);
	free(again);
	free(text);
	ceilings_free(&a);
	ceilings_free(&b);
}

/* The shares of the pageable buffers in huge pages: unknown in a file
 * written before they were recorded (the fixture), kept through a round
 * trip once set, and a share outside 0 to 1 is refused. */
static void test_huge_page_shares(void **state)
{
	(void)state;
	struct ceilings a, b;
	load_fixture(&a);
	assert_true(a.huge_share_pageable < 0 && a.huge_share_first_touch[0] < 0 && a.huge_share_first_touch[1] < 0);
	char *text = ceilings_encode(&a);
	assert_non_null(strstr(text, "\"pageable\": null"));
	free(text);
	a.huge_share_pageable = 1;
	a.huge_share_first_touch[0] = 0.25;
	text = ceilings_encode(&a);
	char *why = NULL;
	assert_true(ceilings_decode(text, strlen(text), &b, &why));
	assert_true(b.huge_share_pageable == 1 && b.huge_share_first_touch[0] == 0.25 &&
		    b.huge_share_first_touch[1] < 0);
	ceilings_free(&b);
	char *at = strstr(text, "\"first_touch_h2d\": 0.25");
	assert_non_null(at);
	memcpy(at + strlen("\"first_touch_h2d\": "), "1.25", 4);
	assert_false(ceilings_decode(text, strlen(text), &b, &why));
	assert_non_null(strstr(why, "huge_page_share.first_touch_h2d"));
	free(why);
	free(text);
	ceilings_free(&a);
}

static void test_rate_between_and_beyond(void **state)
{
	(void)state;
	struct ceilings c;
	load_fixture(&c);
	for (int k = 0; k < CEIL_KINDS; k++) {
		const struct ceil_point *p = c.curve[k];
		size_t n = c.npoints[k];
		for (size_t i = 0; i < n; i++) /* at a measured size: the measured time */
			assert_true(fabs(ceilings_copy_seconds(&c, (enum ceil_kind)k, p[i].bytes) - p[i].seconds) <=
				    1e-12 + 1e-9 * p[i].seconds);
		/* below the smallest: its time (latency-bound) */
		assert_true(ceilings_copy_seconds(&c, (enum ceil_kind)k, 1) == p[0].seconds);
		/* above the largest: its rate */
		double t = ceilings_copy_seconds(&c, (enum ceil_kind)k, p[n - 1].bytes * 8);
		assert_true(fabs(t - 8 * p[n - 1].seconds) <= 1e-9 * t);
		assert_true(fabs(ceilings_gbps(&c, (enum ceil_kind)k, p[n - 1].bytes * 8) - p[n - 1].gbps) <=
			    1e-6 * p[n - 1].gbps);
		for (size_t i = 1; i < n; i++) { /* between two sizes: between their times */
			uint64_t mid = (p[i - 1].bytes + p[i].bytes) / 2;
			double tm = ceilings_copy_seconds(&c, (enum ceil_kind)k, mid);
			double lo = fmin(p[i - 1].seconds, p[i].seconds), hi = fmax(p[i - 1].seconds, p[i].seconds);
			assert_true(tm >= lo * (1 - 1e-12) && tm <= hi * (1 + 1e-12));
		}
	}
	struct ceilings empty = {0};
	assert_true(isnan(ceilings_copy_seconds(&empty, CEIL_H2D_PINNED, 4096)));
	assert_true(isnan(ceilings_gbps(&empty, CEIL_D2H_PAGEABLE, 4096)));
	ceilings_free(&c);
}

/* Decoding a changed copy of the fixture must fail with `want` in the reason. */
static void refused(const char *from, const char *to, const char *want)
{
	char *text = slurp(FIXTURE);
	char *at = strstr(text, from);
	assert_non_null(at);
	struct buf b = {0};
	buf_append(&b, text, (size_t)(at - text));
	buf_puts(&b, to);
	buf_puts(&b, at + strlen(from));
	struct ceilings c;
	char *why = NULL;
	assert_false(ceilings_decode(b.data, b.len, &c, &why));
	assert_non_null(why);
	if (!strstr(why, want))
		fail_msg("'%s' does not say '%s'", why, want);
	free(why);
	buf_free(&b);
	free(text);
}

static void test_refusals_name_the_problem(void **state)
{
	(void)state;
	refused("gpuopt-ceilings/1", "gpuopt-ceilings/9", "schema");
	refused("\"bytes\": 4096", "\"bytes\": 1099511627776", "bytes must grow");
	refused("\"driver_version\"", "\"driver_versions\"", "driver_version: missing");
	refused("\"trials\": ", "\"trials\": -", "trials");
	refused("{", "[", "not JSON");
	struct ceilings c;
	char *why = NULL;
	assert_false(ceilings_decode("", 0, &c, &why));
	free(why);
	assert_false(ceilings_read_file("/nonexistent/ceilings.json", &c, &why));
	assert_non_null(strstr(why, "cannot read '/nonexistent/ceilings.json'"));
	free(why);
}

static void test_cache_is_written_whole_and_checked(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpuopt-test-ceilings-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("XDG_CACHE_HOME", dir, 1);
	struct ceilings c, back;
	load_fixture(&c);
	char *why = NULL;
	assert_int_equal(ceilings_load_cached(c.gpu_uuid, c.driver_version, &back, &why), CEIL_MISSING);
	/* the fixture was measured by this version: save and find it again */
	free(c.gpuopt_version);
	c.gpuopt_version = strdup(GPUOPT_VERSION);
	assert_true(ceilings_save_cached(&c, &why));
	char *path = ceilings_cache_path(c.gpu_uuid);
	assert_non_null(strstr(path, dir));
	assert_non_null(strstr(path, "/gpuopt/ceilings/GPU-"));
	assert_int_equal(ceilings_load_cached(c.gpu_uuid, c.driver_version, &back, &why), CEIL_OK);
	assert_int_equal(back.npoints[CEIL_D2H_PINNED], c.npoints[CEIL_D2H_PINNED]);
	ceilings_free(&back);
	/* another driver: stale, and says why */
	assert_int_equal(ceilings_load_cached(c.gpu_uuid, "999.99", &back, &why), CEIL_STALE);
	assert_non_null(strstr(why, "999.99"));
	free(why);
	/* another gpuopt version: stale */
	free(c.gpuopt_version);
	c.gpuopt_version = strdup("0.0.1");
	assert_true(ceilings_save_cached(&c, &why));
	assert_int_equal(ceilings_load_cached(c.gpu_uuid, c.driver_version, &back, &why), CEIL_STALE);
	assert_non_null(strstr(why, "0.0.1"));
	free(why);
	/* a damaged file */
	assert_true(write_file_atomic(path, "{\"schema\": ", 11, &why));
	assert_int_equal(ceilings_load_cached(c.gpu_uuid, c.driver_version, &back, &why), CEIL_DAMAGED);
	assert_non_null(strstr(why, path));
	free(why);
	/* no temporary files are left beside it */
	char *cmd = xasprintf("test $(ls -A '%s/gpuopt/ceilings' | wc -l) -eq 1 && rm -r '%s'", dir, dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
	/* a UUID that is not one has no path: no file names from a device's say-so */
	assert_null(ceilings_cache_path("../../etc/passwd"));
	assert_null(ceilings_cache_path("GPU-"));
	unsetenv("XDG_CACHE_HOME");
	ceilings_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_decodes),
		cmocka_unit_test(test_huge_page_shares),
		cmocka_unit_test(test_encode_decode_round_trip),
		cmocka_unit_test(test_rate_between_and_beyond),
		cmocka_unit_test(test_refusals_name_the_problem),
		cmocka_unit_test(test_cache_is_written_whole_and_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
