/* fit's arithmetic on the ceilings recorded on the H200
 * (tests/e2e/fixtures/h200_ceilings.json): the transfer times are the
 * measured rates at the working set's size, the speedup bounds and the
 * three verdicts follow from them, a working set too big gets a chunk that
 * fits; and the parsers of sizes, dtypes and shapes, the published peaks and
 * the PCIe table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fit/fit.h"
#include "fit/measure.h"
#include "gpu/ceilings.h"

#define FIXTURE GPUOPT_SOURCE_ROOT "/tests/e2e/fixtures/h200_ceilings.json"
#define GIB (1ull << 30)

static struct ceilings h200;

static int setup(void **state)
{
	(void)state;
	char *why = NULL;
	if (!ceilings_read_file(FIXTURE, &h200, &why)) {
		fprintf(stderr, "%s\n", why);
		return 1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ceilings_free(&h200);
	return 0;
}

static struct fit_settings settings(uint64_t bytes, double cpu_seconds)
{
	struct fit_settings s = {.gpu = -1, .bytes = bytes, .cpu_seconds = cpu_seconds};
	return s;
}

/* The answer for s on the H200's ceilings with free_bytes free. */
static void answer(const struct fit_settings *s, uint64_t free_bytes, struct fit_answer *a)
{
	memset(a, 0, sizeof *a);
	char *why = NULL;
	assert_true(fit_working_set(s, a, &why));
	fit_answer_compute(&h200, free_bytes, s, a);
}

static void test_times_are_the_measured_rates(void **state)
{
	(void)state;
	struct fit_settings s = settings(8 * GIB, -1);
	struct fit_answer a;
	answer(&s, h200.memory_free_bytes, &a);
	assert_true(a.have && a.fits);
	assert_int_equal(a.in_bytes, 8 * GIB);
	assert_int_equal(a.out_bytes, 8 * GIB); /* as much comes back as goes in */
	assert_true(fabs(a.in_pinned - ceilings_copy_seconds(&h200, CEIL_H2D_PINNED, 8 * GIB)) < 1e-12);
	assert_true(fabs(a.out_pageable - ceilings_copy_seconds(&h200, CEIL_D2H_PAGEABLE, 8 * GIB)) < 1e-12);
	/* 8 GiB at the 1 GiB copy's rate: eight times its time */
	size_t last = h200.npoints[CEIL_H2D_PINNED] - 1;
	assert_int_equal(h200.curve[CEIL_H2D_PINNED][last].bytes, GIB);
	assert_true(fabs(a.in_pinned - 8 * h200.curve[CEIL_H2D_PINNED][last].seconds) < 1e-9);
	/* pinned beats pageable; first-touch device->host is the slowest */
	assert_true(a.in_pinned < a.in_pageable && a.out_pinned < a.out_pageable);
	assert_true(a.out_fresh > a.out_pageable);
	/* at the first-touch rate, plus a copy's fixed latency (the curve's smallest copy) */
	double latency = h200.curve[CEIL_D2H_PAGEABLE][0].seconds;
	assert_true(fabs(a.out_fresh - (8.0 * GIB / (h200.first_touch[1].gbps * 1e9) + latency)) < 1e-9);
	assert_int_equal(a.verdict, FIT_VERDICT_NONE); /* no --cpu-seconds: no verdict */
	assert_true(isnan(a.best_pinned));
	fit_answer_free(&a);
}

/* A few bytes touched first take no less than a copy does: not 0 µs, faster than pinned. */
static void test_tiny_first_touch_is_no_faster_than_a_copy(void **state)
{
	(void)state;
	struct fit_settings s = settings(4, -1);
	struct fit_answer a;
	answer(&s, h200.memory_free_bytes, &a);
	assert_true(a.in_fresh >= a.in_pageable && a.in_pageable >= a.in_pinned);
	assert_true(a.out_fresh >= a.out_pageable && a.out_pageable >= a.out_pinned);
	assert_true(a.in_fresh >= h200.curve[CEIL_H2D_PAGEABLE][0].seconds);
	fit_answer_free(&a);
}

static void test_fits_with_room_for_temporaries(void **state)
{
	(void)state;
	struct fit_settings s = settings(40 * GIB, -1);
	struct fit_answer a;
	answer(&s, h200.memory_free_bytes, &a);
	/* 40 GiB x 3 + the context reserve < 139 GiB free */
	assert_true(a.fits);
	assert_int_equal(a.need_bytes, 120 * GIB + (512ull << 20));
	fit_answer_free(&a);
	s.temp_factor = 4; /* 160 GiB do not */
	answer(&s, h200.memory_free_bytes, &a);
	assert_false(a.fits);
	/* the chunk fits with its temporaries, and enough of them cover it all */
	assert_true(a.chunk_bytes * 4 + (512ull << 20) <= h200.memory_free_bytes);
	assert_true(a.chunks * a.chunk_bytes >= a.in_bytes);
	assert_true((a.chunks - 1) * a.chunk_bytes < a.in_bytes);
	assert_non_null(strstr(a.too_big, "Dask"));
	fit_answer_free(&a);
}

static void test_the_three_verdicts(void **state)
{
	(void)state;
	struct fit_answer a;
	/* a part 1.5 times as long as a launch + synchronize: they alone eat it */
	struct fit_settings s = settings(1 << 20, h200.launch_sync.us * 1.5e-6);
	answer(&s, h200.memory_free_bytes, &a);
	assert_int_equal(a.verdict, FIT_CANNOT_PAY);
	assert_true(a.best_resident < 2);
	assert_non_null(strstr(a.why, "launch"));
	fit_answer_free(&a);
	/* 8 GiB that the CPU handles in as long as pinned transfers take: resident only */
	double pinned = ceilings_copy_seconds(&h200, CEIL_H2D_PINNED, 8 * GIB) +
			ceilings_copy_seconds(&h200, CEIL_D2H_PINNED, 8 * GIB);
	s = settings(8 * GIB, pinned * 1.5);
	answer(&s, h200.memory_free_bytes, &a);
	assert_int_equal(a.verdict, FIT_ONLY_IF_RESIDENT);
	assert_true(a.best_pinned < 2 && a.best_resident >= 2);
	fit_answer_free(&a);
	/* ... and four times longer on the CPU: room to gain, pinned */
	s = settings(8 * GIB, pinned * 4);
	answer(&s, h200.memory_free_bytes, &a);
	assert_int_equal(a.verdict, FIT_ROOM_TO_GAIN);
	assert_true(a.best_pinned >= 2 && a.best_pageable < 2);
	assert_non_null(strstr(a.why, "pinned"));
	fit_answer_free(&a);
	/* a hundred times: room even from pageable memory */
	s = settings(8 * GIB, pinned * 100);
	answer(&s, h200.memory_free_bytes, &a);
	assert_int_equal(a.verdict, FIT_ROOM_TO_GAIN);
	assert_true(a.best_pageable >= 2);
	/* the bound is the CPU time over the transfer floor */
	assert_true(fabs(a.best_pinned - s.cpu_seconds / (a.in_pinned + a.out_pinned + a.overhead_s)) < 1e-9);
	fit_answer_free(&a);
	/* too big for the GPU and slow to stream: cannot pay */
	s = settings(400 * GIB, 10);
	answer(&s, h200.memory_free_bytes, &a);
	assert_false(a.fits);
	assert_int_equal(a.verdict, FIT_CANNOT_PAY);
	fit_answer_free(&a);
	/* --min-speedup moves the line */
	s = settings(8 * GIB, pinned * 4);
	s.min_speedup = 20;
	answer(&s, h200.memory_free_bytes, &a);
	assert_int_equal(a.verdict, FIT_ONLY_IF_RESIDENT);
	fit_answer_free(&a);
	assert_string_equal(fit_verdict_name(FIT_ONLY_IF_RESIDENT), "can pay only if the data stays on the device");
}

static void test_working_set_from_dtype_and_shape(void **state)
{
	(void)state;
	const char *dt[2] = {"float32", "int8"}, *sh[2] = {"(1000000, 64)", "4"};
	struct fit_settings s = {.gpu = -1, .dtypes = dt, .ndtypes = 1, .shapes = sh, .nshapes = 1, .cpu_seconds = -1};
	struct fit_answer a = {0};
	char *why = NULL;
	assert_true(fit_working_set(&s, &a, &why));
	assert_int_equal(a.narrays, 1);
	assert_int_equal(a.in_bytes, 1000000ull * 64 * 4);
	assert_int_equal(a.arrays[0].row_bytes, 64 * 4);
	assert_string_equal(a.arrays[0].shape, "(1000000, 64)");
	fit_answer_free(&a);
	struct {
		const char *dtype, *shape;
		uint64_t bytes;
	} ok[] = {{"f8", "10x10", 800}, {"<c16", "3", 48}, {"bool", "[2, 3, 4]", 24}, {"int8", "()", 1},
		  {"complex64", "1,1,1", 8}};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		dt[0] = ok[i].dtype;
		sh[0] = ok[i].shape;
		memset(&a, 0, sizeof a);
		assert_true(fit_working_set(&s, &a, &why));
		assert_int_equal(a.in_bytes, ok[i].bytes);
		fit_answer_free(&a);
	}
	const char *bad_shapes[] = {"1,-2", "abc", "1,,2", "(1, 2", "99999999999999999999", "1e3"};
	dt[0] = "float32";
	for (size_t i = 0; i < sizeof bad_shapes / sizeof *bad_shapes; i++) {
		sh[0] = bad_shapes[i];
		memset(&a, 0, sizeof a);
		assert_false(fit_working_set(&s, &a, &why));
		assert_non_null(strstr(why, "--shape"));
		free(why);
		fit_answer_free(&a);
	}
	sh[0] = "4294967296,4294967296,4294967296"; /* overflows 64 bits */
	memset(&a, 0, sizeof a);
	assert_false(fit_working_set(&s, &a, &why));
	free(why);
	fit_answer_free(&a);
	dt[0] = "object";
	sh[0] = "3";
	memset(&a, 0, sizeof a);
	assert_false(fit_working_set(&s, &a, &why));
	assert_non_null(strstr(why, "--dtype"));
	free(why);
	fit_answer_free(&a);
	s.ndtypes = 0;
	memset(&a, 0, sizeof a);
	assert_false(fit_working_set(&s, &a, &why));
	assert_string_equal(why, "--shape needs --dtype");
	free(why);
	fit_answer_free(&a);
	/* pairs add up; counts that differ are refused */
	dt[0] = "float32";
	sh[0] = "1000";
	s.ndtypes = s.nshapes = 2;
	memset(&a, 0, sizeof a);
	assert_true(fit_working_set(&s, &a, &why));
	assert_int_equal(a.narrays, 2);
	assert_int_equal(a.in_bytes, 4004);
	fit_answer_free(&a);
	s.nshapes = 1;
	memset(&a, 0, sizeof a);
	assert_false(fit_working_set(&s, &a, &why));
	assert_non_null(strstr(why, "--dtype is given 2 times and --shape 1 times"));
	free(why);
	fit_answer_free(&a);
}

static void test_sizes_parse(void **state)
{
	(void)state;
	struct {
		const char *text;
		uint64_t bytes;
	} ok[] = {{"123", 123}, {"1.5e9", 1500000000}, {"64KiB", 65536}, {"8GiB", 8 * GIB}, {"8G", 8 * GIB},
		  {"8GB", 8000000000ull}, {"2 MiB", 2 << 20}, {"1tb", 1000000000000ull}, {"0", 0}, {"512b", 512}};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		uint64_t v = 1;
		assert_true(fit_parse_bytes(ok[i].text, &v));
		assert_int_equal(v, ok[i].bytes);
	}
	const char *bad[] = {"", "-1", "8 parsecs", "GiB", "1e400", "nan", "inf", "8GiBs"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		uint64_t v;
		assert_false(fit_parse_bytes(bad[i], &v));
	}
	char *t = fit_bytes_text(8 * GIB);
	assert_string_equal(t, "8 GiB");
	free(t);
	t = fit_bytes_text(1536);
	assert_string_equal(t, "1.50 KiB");
	free(t);
	uint64_t sizes[CEIL_MAX_POINTS];
	assert_int_equal(measure_sizes(GIB, 4, sizes, CEIL_MAX_POINTS), 10);
	assert_int_equal(sizes[9], GIB);
	assert_int_equal(measure_sizes(256ull << 20, 16, sizes, CEIL_MAX_POINTS), 5);
}

static void test_published_peaks_and_links(void **state)
{
	(void)state;
	struct {
		const char *nvml_name, *entry;
		double memory;
	} cases[] = {
		{"NVIDIA H200", "H200 SXM 141GB", 4800}, {"NVIDIA H200 NVL", "H200 NVL", 4800},
		{"NVIDIA GH200 480GB", "GH200 (HBM3)", 4000}, {"NVIDIA H100 80GB HBM3", "H100 SXM 80GB", 3350},
		{"NVIDIA H100 PCIe", "H100 PCIe 80GB", 2000}, {"NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", 2039},
		{"NVIDIA L40S", "L40S", 864}, {"NVIDIA L4", "L4", 300},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct fit_peak p;
		fit_peak_lookup(cases[i].nvml_name, &p);
		assert_true(p.found);
		assert_string_equal(p.name, cases[i].entry);
		assert_true(p.memory_gbps == cases[i].memory);
		assert_non_null(p.source);
		fit_peak_free(&p);
	}
	struct fit_peak p;
	fit_peak_lookup("NVIDIA GeForce GT 710", &p);
	assert_false(p.found);
	fit_peak_free(&p);
	/* PCIe Gen5 x16: 32 GT/s x 16 lanes, 128b/130b */
	assert_true(fabs(fit_pcie_gbps(5, 16) - 63.008) < 1e-9);
	assert_true(fabs(fit_pcie_gbps(4, 8) - 15.752) < 1e-9);
	assert_true(isnan(fit_pcie_gbps(9, 16)) && isnan(fit_pcie_gbps(0, 16)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times_are_the_measured_rates),
		cmocka_unit_test(test_tiny_first_touch_is_no_faster_than_a_copy),
		cmocka_unit_test(test_fits_with_room_for_temporaries),
		cmocka_unit_test(test_the_three_verdicts),
		cmocka_unit_test(test_working_set_from_dtype_and_shape),
		cmocka_unit_test(test_sizes_parse),
		cmocka_unit_test(test_published_peaks_and_links),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
