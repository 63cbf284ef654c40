/* verify_paths on integers that float64 cannot hold and on float16 ulps,
 * with files that Python's csv module, pandas and numpy wrote: an int64,
 * uint64 or wider id column is compared exactly (one unit apart is a
 * difference, whatever the size), an int64 array against a float64 one
 * under --allow-dtype keeps its integers exact, and --ulp on float16
 * counts float16 ulps — as many as numpy's nulp_diff says. */
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
	strcpy(dir, "/tmp/gpuopt-verify-exact-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/python3 -c \""
		 "import csv, numpy as np, pandas as pd\n"
		 "from numpy.testing._private.utils import nulp_diff\n"
		 "d = '%s'\n"
		 "def table(name, rows):\n"
		 "    with open(d + '/' + name, 'w', newline='') as f: csv.writer(f).writerows(rows)\n"
		 "table('i64_ref.csv', [['id', 'v'], [2**63 - 1, 1], [-2**63, 2], [5, 3]])\n"
		 "table('i64_cand.csv', [['id', 'v'], [2**63 - 2, 1], [-2**63, 2], [5, 3]])\n"
		 "table('big_ref.csv', [['id'], [10**44 + 1], [-(10**40)], [7]])\n"
		 "table('big_cand.csv', [['id'], [10**44 + 2], [-(10**40)], [7]])\n"
		 "u = np.array([2**64 - 1, 2**63, 1], dtype=np.uint64)\n"
		 "pd.DataFrame({'id': u, 'x': [0.5, 1.5, 2.5]}).to_csv(d + '/u64_ref.csv', index=False)\n"
		 "u[0] -= np.uint64(1)\n"
		 "pd.DataFrame({'id': u, 'x': [0.5, 1.5, 2.5]}).to_csv(d + '/u64_cand.csv', index=False)\n"
		 "pd.DataFrame({'id': [2**70 + 1, 3]}, dtype=object).to_csv(d + '/obj_ref.csv', index=False)\n"
		 "pd.DataFrame({'id': [2**70, 3]}, dtype=object).to_csv(d + '/obj_cand.csv', index=False)\n"
		 "np.save(d + '/ids.npy', np.array([2**53 + 1, 2**62 + 1, 9], dtype=np.int64))\n"
		 "np.save(d + '/flt.npy', np.array([2.0**53, 2.0**62, 9.0]))\n"
		 "a = np.array([1.0, -3.0, 6e-5, 65504.0], dtype=np.float16)\n"
		 "b = a.copy(); b[0] = np.nextafter(a[0], np.float16(2)); b[2] = np.nextafter(np.nextafter(a[2], np.float16(1)), np.float16(1))\n"
		 "np.save(d + '/h_ref.npy', a); np.save(d + '/h_cand.npy', b)\n"
		 "open(d + '/h_ulps', 'w').write(str(max(int(nulp_diff(x, y)) for x, y in zip(a, b))))\n"
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

static struct verify_report *compare(const struct verify_opts *o, const char *ref, const char *cand)
{
	static char r[128], c[128];
	snprintf(r, sizeof r, "%s/%s", dir, ref);
	snprintf(c, sizeof c, "%s/%s", dir, cand);
	return verify_paths(o, r, c);
}

static const struct vitem *column(const struct verify_report *r, const char *name)
{
	assert_int_equal(r->items.len, 1);
	const struct vitem *t = r->items.items[0];
	assert_int_equal(t->kind, V_TABLE);
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i]->name, name) == 0)
			return t->cols[i];
	fail_msg("no column %s", name);
	return NULL;
}

static void test_int64_column(void **state)
{
	(void)state;
	struct verify_opts o = {.equal_nan = true, .show = 5};
	struct verify_report *r = compare(&o, "i64_ref.csv", "i64_cand.csv");
	const struct vitem *id = column(r, "id");
	assert_int_equal(id->coltype, COL_INT);
	assert_int_equal(id->status, V_FAIL);
	assert_int_equal(id->st->mismatches, 1);
	assert_true(id->st->max_abs.err == 1);
	assert_int_equal(verify_exit_code(r), 1);
	verify_report_free(r);
	r = compare(&o, "i64_ref.csv", "i64_ref.csv");
	assert_int_equal(verify_exit_code(r), 0);
	verify_report_free(r);
}

static void test_uint64_column_from_pandas(void **state)
{
	(void)state;
	struct verify_opts o = {.equal_nan = true, .show = 5};
	struct verify_report *r = compare(&o, "u64_ref.csv", "u64_cand.csv");
	const struct vitem *id = column(r, "id");
	assert_int_equal(id->coltype, COL_INT);
	assert_int_equal(id->status, V_FAIL);
	assert_int_equal(id->st->mismatches, 1);
	assert_string_equal(id->cells[0].ref, "18446744073709551615");
	assert_int_equal(column(r, "x")->status, V_PASS);
	verify_report_free(r);
	/* a tolerance applies to the exact difference: one unit is within 1 */
	struct verify_opts t = {.equal_nan = true, .show = 5, .atol_set = true, .atol = 1, .rtol_set = true};
	r = compare(&t, "u64_ref.csv", "u64_cand.csv");
	assert_int_equal(verify_exit_code(r), 0);
	verify_report_free(r);
}

static void test_integers_beyond_128_bits(void **state)
{
	(void)state;
	struct verify_opts o = {.equal_nan = true, .show = 5};
	struct verify_report *r = compare(&o, "big_ref.csv", "big_cand.csv");
	const struct vitem *id = column(r, "id");
	assert_int_equal(id->coltype, COL_BIGINT);
	assert_int_equal(id->status, V_FAIL);
	assert_int_equal(id->differ, 1);
	verify_report_free(r);
	/* pandas writes Python ints of an object column as they are: 2**70 + 1 */
	r = compare(&o, "obj_ref.csv", "obj_cand.csv");
	id = column(r, "id");
	assert_int_equal(id->coltype, COL_INT);
	assert_int_equal(id->status, V_FAIL);
	verify_report_free(r);
	r = compare(&o, "big_ref.csv", "big_ref.csv");
	assert_int_equal(verify_exit_code(r), 0);
	verify_report_free(r);
}

static void test_int64_against_float64_is_exact(void **state)
{
	(void)state;
	struct verify_opts o = {.equal_nan = true, .show = 5, .allow_dtype = true, .rtol_set = true,
				.atol_set = true};
	struct verify_report *r = compare(&o, "ids.npy", "flt.npy");
	const struct vitem *it = r->items.items[0];
	assert_int_equal(it->st->kind, CMP_DD);
	assert_int_equal(it->status, V_FAIL);
	assert_int_equal(it->st->mismatches, 2); /* 2**53 + 1 and 2**62 + 1 */
	assert_true(it->st->max_abs.err == 1);
	assert_int_equal(it->st->max_abs.ref.type, CMP_VINT);
	assert_true(it->st->max_abs.ref.i == ((int64_t)1 << 53) + 1);
	verify_report_free(r);
}

static void test_float16_ulps_are_float16_ulps(void **state)
{
	(void)state;
	char path[128], text[32] = {0};
	snprintf(path, sizeof path, "%s/h_ulps", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof text, f));
	fclose(f);
	unsigned long numpy_says = strtoul(text, NULL, 10);
	assert_int_equal(numpy_says, 2);
	struct verify_opts o = {.equal_nan = true, .show = 5, .by_ulp = true, .ulp = numpy_says};
	struct verify_report *r = compare(&o, "h_ref.npy", "h_cand.npy");
	const struct vitem *it = r->items.items[0];
	assert_int_equal(it->st->kind, CMP_F16);
	assert_int_equal(it->status, V_PASS);
	assert_true(it->st->max_ulp.err == (double)numpy_says);
	verify_report_free(r);
	o.ulp = numpy_says - 1;
	r = compare(&o, "h_ref.npy", "h_cand.npy");
	it = r->items.items[0];
	assert_int_equal(it->status, V_FAIL);
	assert_int_equal(it->st->mismatches, 1);
	verify_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int64_column),
		cmocka_unit_test(test_uint64_column_from_pandas),
		cmocka_unit_test(test_integers_beyond_128_bits),
		cmocka_unit_test(test_int64_against_float64_is_exact),
		cmocka_unit_test(test_float16_ulps_are_float16_ulps),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
