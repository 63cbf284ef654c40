/* The comparison kernels against a plain, obviously-right implementation
 * written here (numpy.isclose's own logic: NaN and infinities first, then
 * |c - r| <= atol + rtol * |r|), on random data full of the awkward values
 * (NaN, +-inf, +-0, subnormals, values on the tolerance boundary), fed in
 * blocks of random sizes so that padding and the scans for positions are
 * exercised. Also: conversions from every dtype and byte order, the type
 * two dtypes are compared in, and torch's default tolerances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "verify/compare.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double uniform(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

/* A reference value: mostly ordinary, sometimes awkward. */
static double awkward(void)
{
	switch (next() % 16) {
	case 0: return NAN;
	case 1: return INFINITY;
	case 2: return -INFINITY;
	case 3: return 0.0;
	case 4: return -0.0;
	case 5: return 1e-310 * uniform(); /* subnormal double */
	default: return (uniform() - 0.5) * pow(10, (double)(next() % 12) - 6);
	}
}

/* A candidate near r: equal, within, near the boundary, out, or awkward. */
static double perturb(double r, double rtol, double atol)
{
	double tol = atol + rtol * fabs(r);
	switch (next() % 8) {
	case 0: return r;
	case 1: return r + tol * (uniform() - 0.5);
	case 2: return r + tol * (next() % 2 ? 1 : -1);          /* on the boundary */
	case 3: return r + tol * (1 + 1e-6) * (next() % 2 ? 1 : -1);
	case 4: return r + tol * 10 * (uniform() + 0.1);
	case 5: return awkward();
	case 6: return nextafter(r, INFINITY);
	default: return -r;
	}
}

struct expect {
	uint64_t n, mismatches, nr, nc, nb;
	double max_abs, max_rel;
	uint64_t max_abs_at, max_rel_at;
	uint64_t shown[CMP_MAX_SHOW];
	unsigned nshown;
	double sd, sr;
};

static void expect_point(struct expect *e, uint64_t i, double err, double rel, double r)
{
	if (err > e->max_abs) {
		e->max_abs = err;
		e->max_abs_at = i;
	}
	if (rel > e->max_rel) {
		e->max_rel = rel;
		e->max_rel_at = i;
	}
	e->sd += err * err;
	e->sr += r * r;
}

static void check(const struct cmp_stats *st, const struct expect *e)
{
	assert_int_equal(st->n, e->n);
	assert_int_equal(st->mismatches, e->mismatches);
	assert_int_equal(st->nan_ref_only, e->nr);
	assert_int_equal(st->nan_cand_only, e->nc);
	assert_int_equal(st->nan_both, e->nb);
	assert_true(st->max_abs.err == e->max_abs);
	assert_int_equal(st->max_abs.at, e->max_abs_at);
	assert_true(st->max_rel.err == e->max_rel);
	assert_int_equal(st->max_rel.at, e->max_rel_at);
	assert_int_equal(st->nshown, e->nshown);
	for (unsigned i = 0; i < e->nshown; i++)
		assert_int_equal(st->shown[i].at, e->shown[i]);
	if (isfinite(e->sd) && isfinite(st->sum_d2))
		assert_true(fabs(st->sum_d2 - e->sd) <= 1e-9 * e->sd + 1e-300);
	if (isfinite(e->sr))
		assert_true(fabs(st->sum_r2 - e->sr) <= 1e-9 * e->sr + 1e-300);
}

/* Feeds ref / cand (n elements of size sz) in blocks of random sizes. */
static void feed(struct cmp_stats *st, const void *ref, const void *cand, size_t n, size_t sz)
{
	const unsigned char *r = ref, *c = cand;
	size_t done = 0;
	while (done < n) {
		size_t m = next() % 3 ? CMP_BLOCK : 1 + next() % CMP_BLOCK;
		if (m > n - done)
			m = n - done;
		cmp_block(st, r + done * sz, c + done * sz, m, done);
		done += m;
	}
}

static void test_float32(void **state)
{
	(void)state;
	enum { N = 5000 };
	static float r[N], c[N];
	for (int round = 0; round < 40; round++) {
		bool eqnan = round % 2;
		double rtol = round % 3 ? 1.3e-6 : 0.0, atol = round % 5 ? 1e-5 : 0.0;
		size_t n = 1 + next() % N;
		for (size_t i = 0; i < n; i++) {
			r[i] = (float)awkward();
			c[i] = (float)perturb(r[i], rtol, atol);
		}
		struct cmp_opts o = {.rtol = rtol, .atol = atol, .equal_nan = eqnan, .show = 7};
		struct cmp_stats st;
		cmp_init(&st, CMP_F32, &o);
		feed(&st, r, c, n, sizeof *r);
		struct expect e = {.n = n, .max_abs = -1, .max_rel = -1};
		const float fa = (float)atol, fr = (float)rtol;
		for (size_t i = 0; i < n; i++) {
			float x = r[i], y = c[i];
			bool ok;
			if (isnan(x) || isnan(y))
				ok = eqnan && isnan(x) && isnan(y);
			else if (isinf(x) || isinf(y))
				ok = x == y;
			else
				ok = fabsf(y - x) <= fa + fr * fabsf(x);
			e.nr += isnan(x) && !isnan(y);
			e.nc += isnan(y) && !isnan(x);
			e.nb += isnan(x) && isnan(y);
			if (!ok && e.nshown < 7)
				e.shown[e.nshown++] = i;
			e.mismatches += !ok;
			if (isnan(x) || isnan(y))
				continue;
			float d = x == y ? 0.0f : fabsf(y - x);
			float rel = d == 0 ? 0.0f : isinf(x) ? INFINITY : d / fabsf(x);
			expect_point(&e, i, d, rel, fabsf(x));
		}
		check(&st, &e);
	}
}

static void test_float64_and_ulps(void **state)
{
	(void)state;
	enum { N = 4000 };
	static double r[N], c[N];
	for (int round = 0; round < 40; round++) {
		bool eqnan = round % 2, ulp_mode = round % 4 >= 2;
		double rtol = 1e-7, atol = round % 3 ? 1e-7 : 0;
		uint64_t ulp = next() % 6;
		size_t n = 1 + next() % N;
		for (size_t i = 0; i < n; i++) {
			r[i] = awkward();
			c[i] = perturb(r[i], rtol, atol);
			if (ulp_mode && next() % 3 == 0) { /* a few steps away */
				c[i] = r[i];
				for (int s = (int)(next() % 8); s > 0; s--)
					c[i] = nextafter(c[i], r[i] > 0 ? -INFINITY : INFINITY);
			}
		}
		struct cmp_opts o = {.rtol = rtol, .atol = atol, .equal_nan = eqnan, .by_ulp = ulp_mode,
				     .ulp = ulp, .show = 100};
		struct cmp_stats st;
		cmp_init(&st, CMP_F64, &o);
		feed(&st, r, c, n, sizeof *r);
		struct expect e = {.n = n, .max_abs = -1, .max_rel = -1};
		uint64_t max_ulp = 0;
		bool any_ulp = false;
		for (size_t i = 0; i < n; i++) {
			double x = r[i], y = c[i];
			bool ok;
			/* ulps by counting steps, for small distances; else huge */
			uint64_t steps = 0;
			if (!isnan(x) && !isnan(y) && x != y) {
				double t = x;
				while (t != y && steps <= 64) {
					t = nextafter(t, y);
					steps++;
				}
				if (t != y)
					steps = UINT64_MAX;
			}
			if (isnan(x) || isnan(y))
				ok = eqnan && isnan(x) && isnan(y);
			else if (isinf(x) || isinf(y))
				ok = x == y;
			else if (ulp_mode)
				ok = steps <= ulp;
			else
				ok = fabs(y - x) <= atol + rtol * fabs(x);
			e.nr += isnan(x) && !isnan(y);
			e.nc += isnan(y) && !isnan(x);
			e.nb += isnan(x) && isnan(y);
			if (!ok && e.nshown < 100)
				e.shown[e.nshown++] = i;
			e.mismatches += !ok;
			if (isnan(x) || isnan(y))
				continue;
			double d = x == y ? 0.0 : fabs(y - x);
			double rel = d == 0 ? 0.0 : isinf(x) ? INFINITY : d / fabs(x);
			expect_point(&e, i, d, rel, fabs(x));
			if (ulp_mode && x != y && steps <= 64 && (!any_ulp || steps > max_ulp)) {
				max_ulp = steps;
				any_ulp = true;
			}
		}
		check(&st, &e);
		if (ulp_mode && any_ulp && st.max_ulp.err <= 64)
			assert_true(st.max_ulp.err == (double)max_ulp);
	}
}

static void test_integers(void **state)
{
	(void)state;
	enum { N = 3000 };
	static int64_t r[N], c[N];
	for (int round = 0; round < 20; round++) {
		bool tol = round % 2;
		size_t n = 1 + next() % N;
		for (size_t i = 0; i < n; i++) {
			switch (next() % 6) {
			case 0: r[i] = INT64_MIN; break;
			case 1: r[i] = INT64_MAX; break;
			default: r[i] = (int64_t)(next() % 2001) - 1000;
			}
			c[i] = next() % 3 ? r[i] : (int64_t)(next() % 2001) - 1000;
		}
		struct cmp_opts o = {.rtol = tol ? 0.01 : 0, .atol = tol ? 2 : 0, .show = 5};
		struct cmp_stats st;
		cmp_init(&st, CMP_I64, &o);
		feed(&st, r, c, n, sizeof *r);
		uint64_t bad = 0, first = UINT64_MAX;
		for (size_t i = 0; i < n; i++) {
			/* the difference exactly, then the test in double as documented */
			long double d = (long double)c[i] - (long double)r[i];
			double ad = (double)fabsl(d), ar = fabs((double)r[i]);
			bool ok = tol ? ad <= 2 + 0.01 * ar : d == 0;
			bad += !ok;
			if (!ok && first == UINT64_MAX)
				first = i;
		}
		assert_int_equal(st.mismatches, bad);
		if (bad)
			assert_int_equal(st.shown[0].at, first);
		assert_int_equal(st.nan_ref_only + st.nan_cand_only, 0);
	}
	/* INT64_MIN against INT64_MAX: the difference needs 64 bits unsigned */
	int64_t a = INT64_MIN, b = INT64_MAX;
	struct cmp_opts o = {.show = 1};
	struct cmp_stats st;
	cmp_init(&st, CMP_I64, &o);
	cmp_block(&st, &a, &b, 1, 0);
	assert_int_equal(st.mismatches, 1);
	assert_true(st.max_abs.err == 18446744073709551615.0);
	assert_int_equal(st.shown[0].ref.i, INT64_MIN);
}

static void test_complex(void **state)
{
	(void)state;
	enum { N = 2000 };
	static double r[2 * N], c[2 * N];
	size_t n = N;
	for (size_t i = 0; i < 2 * n; i++) {
		r[i] = awkward();
		c[i] = perturb(r[i], 1e-7, 1e-7);
	}
	struct cmp_opts o = {.rtol = 1e-7, .atol = 1e-7, .equal_nan = true, .show = 3};
	struct cmp_stats st;
	cmp_init(&st, CMP_C128, &o);
	feed(&st, r, c, n, 16);
	uint64_t bad = 0, nr = 0;
	for (size_t i = 0; i < n; i++) {
		double xr = r[2 * i], xi = r[2 * i + 1], yr = c[2 * i], yi = c[2 * i + 1];
		bool xn = isnan(xr) || isnan(xi), yn = isnan(yr) || isnan(yi), ok;
		if (xn || yn)
			ok = xn && yn;
		else if (isinf(xr) || isinf(xi) || isinf(yr) || isinf(yi))
			ok = xr == yr && xi == yi;
		else
			ok = hypot(yr - xr, yi - xi) <= 1e-7 + 1e-7 * hypot(xr, xi);
		bad += !ok;
		nr += xn && !yn;
	}
	assert_int_equal(st.mismatches, bad);
	assert_int_equal(st.nan_ref_only, nr);
}

static void test_conversions(void **state)
{
	(void)state;
	_Alignas(16) unsigned char out[CMP_BLOCK * 16];
	/* big-endian float32 */
	const unsigned char be_f4[8] = {0x3f, 0x80, 0, 0, 0xc0, 0x49, 0x0f, 0xdb};
	struct npy_dtype f4be = {'f', 4, '>', true};
	cmp_convert(CMP_F32, &f4be, be_f4, 2, out);
	float f[2];
	memcpy(f, out, sizeof f);
	assert_true(f[0] == 1.0f);
	assert_true(f[1] == -3.14159274101257324f);
	/* float16 to float32 and float64 */
	const unsigned char h[4] = {0x00, 0x3c, 0x00, 0xc0}; /* 1, -2 little-endian */
	struct npy_dtype f2 = {'f', 2, '<', false};
	cmp_convert(CMP_F64, &f2, h, 2, out);
	double d[2];
	memcpy(d, out, sizeof d);
	assert_true(d[0] == 1.0 && d[1] == -2.0);
	/* unaligned int32, big-endian, to int64 */
	const unsigned char i4[9] = {0, 0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x01, 0x00};
	struct npy_dtype i4be = {'i', 4, '>', true};
	cmp_convert(CMP_I64, &i4be, i4 + 1, 2, out);
	int64_t v[2];
	memcpy(v, out, sizeof v);
	assert_int_equal(v[0], -2);
	assert_int_equal(v[1], 256);
	/* bool: any non-zero byte is 1 */
	const unsigned char b[3] = {0, 1, 7};
	struct npy_dtype b1 = {'b', 1, '|', false};
	cmp_convert(CMP_F32, &b1, b, 3, out);
	float fb[3];
	memcpy(fb, out, sizeof fb);
	assert_true(fb[0] == 0 && fb[1] == 1 && fb[2] == 1);
	/* complex64 big-endian to complex128 */
	const unsigned char c8[8] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
	struct npy_dtype c8be = {'c', 8, '>', true};
	cmp_convert(CMP_C128, &c8be, c8, 1, out);
	memcpy(d, out, sizeof d);
	assert_true(d[0] == 1.0 && d[1] == 2.0);
	/* uint64 above INT64_MAX with int8, exactly (128 bits) */
	uint64_t big = UINT64_MAX;
	int8_t neg = -1;
	struct npy_dtype u8 = {'u', 8, '<', false}, i1 = {'i', 1, '|', false};
	assert_int_equal(cmp_kind_for(&u8, &i1), CMP_I128);
	_Alignas(16) unsigned char r128[16], c128[16];
	cmp_convert(CMP_I128, &u8, (const unsigned char *)&big, 1, r128);
	cmp_convert(CMP_I128, &i1, (const unsigned char *)&neg, 1, c128);
	struct cmp_opts o = {.show = 1};
	struct cmp_stats st;
	cmp_init(&st, CMP_I128, &o);
	cmp_block(&st, r128, c128, 1, 0);
	assert_int_equal(st.mismatches, 1);
	assert_int_equal(st.shown[0].ref.u, UINT64_MAX);
	assert_int_equal(st.shown[0].cand.i, -1);
}

static void test_types_and_defaults(void **state)
{
	(void)state;
	struct npy_dtype f2 = {'f', 2, '<', 0}, f4 = {'f', 4, '<', 0}, f8 = {'f', 8, '<', 0},
			 c8 = {'c', 8, '<', 0}, c16 = {'c', 16, '<', 0}, i2 = {'i', 2, '<', 0},
			 i4 = {'i', 4, '<', 0}, u8 = {'u', 8, '<', 0}, u4 = {'u', 4, '<', 0},
			 b1 = {'b', 1, '|', 0};
	assert_int_equal(cmp_kind_for(&f4, &f4), CMP_F32);
	assert_int_equal(cmp_kind_for(&f2, &f2), CMP_F16); /* float32 values, float16 ulps */
	assert_int_equal(cmp_kind_for(&f2, &f4), CMP_F32);
	assert_int_equal(cmp_kind_for(&f8, &f4), CMP_F64);
	assert_int_equal(cmp_kind_for(&f4, &i2), CMP_F32);
	assert_int_equal(cmp_kind_for(&f4, &i4), CMP_F64);
	assert_int_equal(cmp_kind_for(&c8, &f4), CMP_C64);
	assert_int_equal(cmp_kind_for(&c8, &f8), CMP_C128);
	assert_int_equal(cmp_kind_for(&c16, &c16), CMP_C128);
	assert_int_equal(cmp_kind_for(&u8, &u4), CMP_U64);
	assert_int_equal(cmp_kind_for(&u8, &f8), CMP_DD); /* exact integers against floats */
	assert_int_equal(cmp_kind_for(&u4, &i4), CMP_I64);
	assert_int_equal(cmp_kind_for(&b1, &b1), CMP_I64);
	double r, a;
	cmp_default_tol(&f2, &r, &a);
	assert_true(r == 1e-3 && a == 1e-5);
	cmp_default_tol(&f4, &r, &a);
	assert_true(r == 1.3e-6 && a == 1e-5);
	cmp_default_tol(&c8, &r, &a);
	assert_true(r == 1.3e-6 && a == 1e-5);
	cmp_default_tol(&f8, &r, &a);
	assert_true(r == 1e-7 && a == 1e-7);
	cmp_default_tol(&i4, &r, &a);
	assert_true(r == 0 && a == 0);
	assert_true(cmp_direct(CMP_F32, &f4));
	struct npy_dtype f4be = {'f', 4, '>', true};
	assert_false(cmp_direct(CMP_F32, &f4be));
	assert_false(cmp_direct(CMP_F64, &f4));
}

static void test_l2_and_empty(void **state)
{
	(void)state;
	struct cmp_opts o = {.rtol = 0, .atol = 0, .equal_nan = true, .show = 5};
	struct cmp_stats st;
	cmp_init(&st, CMP_F64, &o);
	assert_true(cmp_rel_l2(&st) == 0);
	double r[3] = {3, 4, NAN}, c[3] = {3, 4.5, 1};
	cmp_block(&st, r, c, 3, 0);
	assert_true(fabs(cmp_rel_l2(&st) - 0.5 / 5.0) < 1e-15);
	assert_int_equal(st.mismatches, 2);
	double z[1] = {0}, one[1] = {1};
	cmp_init(&st, CMP_F64, &o);
	cmp_block(&st, z, one, 1, 0);
	assert_true(isinf(cmp_rel_l2(&st)));
	assert_true(isinf(st.max_rel.err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_float32),
		cmocka_unit_test(test_float64_and_ulps),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_complex),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_types_and_defaults),
		cmocka_unit_test(test_l2_and_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
