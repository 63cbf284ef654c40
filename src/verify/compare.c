/* compare: see compare.h.
 *
 * Each kernel handles one block of exactly CMP_BLOCK elements (a shorter
 * last block is padded with zeros on both sides, which always pass): a
 * constant trip count lets GCC's -O2 cost model vectorize, and the loops are
 * kept free of branches and of floating-point reductions, which a compiler
 * may not reorder:
 *
 *   1. the test and the per-element error, branch-free (selects only), with
 *      integer counters as the only reductions;
 *   2. the relative error, and how many elements beat the largest errors so
 *      far (integer counts again);
 *   3. the sums of squares for the L2 error, in CMP_LANES independent
 *      double accumulators so the order of the additions is fixed.
 *
 * Only when step 1 or 2 found something (a mismatch to list, a new largest
 * error) is the block scanned again, element by element, to find where.
 *
 * What the compilers make of it, checked with `gcc -O2 -fopt-info-vec-all`
 * (GCC 12.2, on the preprocessed file so each loop has its own line), with
 * `clang -O2 -Rpass=loop-vectorize` (clang 14) and with objdump on the
 * objects of the meson build (packed cmpps/mulps/divps/cvtps2pd/addpd in
 * kernel_f32.default, the same on %ymm registers in kernel_f32.avx2):
 *   float32, rtol/atol test: steps 1, 2 and 3 vectorized by both compilers,
 *     4 lanes in the SSE2 build and 8 in the AVX2 clone (TARGET_CLONES);
 *   float64: GCC vectorizes steps 1 and 2 only in the AVX2 clone (it needs
 *     SSE4.1 blends for 64-bit masks), step 3 in both; clang all of them;
 *   --ulp (float32 and float64): clang vectorizes step 1, GCC does not;
 *   integers: 64-bit compares need SSE4.2, so mostly scalar; complex (hypot)
 *     scalar. The rescans for positions are scalar and rare. */
#include "compare.h"

#include <float.h>
#include <math.h>
#include <string.h>

__extension__ typedef __int128 cmp_i128;
__extension__ typedef unsigned __int128 cmp_u128;

enum { CMP_LANES = 8 };

/* The float kernels are also built for AVX2, picked at run time (an ifunc):
 * twice the lanes, and GCC 12 vectorizes the float64 kernel only with the
 * SSE4.1+ blend instructions. AVX2 does not bring FMA, so both versions
 * round identically. */
#if defined(__x86_64__) && defined(__linux__) && (defined(__clang__) ? __clang_major__ >= 14 : __GNUC__ >= 6)
#define TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TARGET_CLONES
#endif

size_t cmp_kind_size(enum cmp_kind k)
{
	switch (k) {
	case CMP_I64:
	case CMP_U64:
	case CMP_F64:
	case CMP_C64: return 8;
	case CMP_F32:
	case CMP_F16: return 4;
	case CMP_I128:
	case CMP_C128:
	case CMP_DD: return 16;
	}
	return 16;
}

void cmp_init(struct cmp_stats *st, enum cmp_kind k, const struct cmp_opts *o)
{
	memset(st, 0, sizeof *st);
	st->kind = k;
	st->opts = *o;
	if (st->opts.show > CMP_MAX_SHOW)
		st->opts.show = CMP_MAX_SHOW;
	st->max_abs.err = st->max_rel.err = st->max_ulp.err = -1;
}

double cmp_rel_l2(const struct cmp_stats *st)
{
	if (st->sum_r2 == 0)
		return st->sum_d2 == 0 ? 0 : INFINITY;
	return sqrt(st->sum_d2) / sqrt(st->sum_r2);
}

/* ---- values, for the report ---- */

static struct cmp_value value_at(enum cmp_kind k, const void *base, size_t i)
{
	struct cmp_value v;
	memset(&v, 0, sizeof v);
	switch (k) {
	case CMP_I64:
		v.type = CMP_VINT;
		v.i = ((const int64_t *)base)[i];
		v.re = (double)v.i;
		break;
	case CMP_U64:
		v.type = CMP_VUINT;
		v.u = ((const uint64_t *)base)[i];
		v.re = (double)v.u;
		break;
	case CMP_I128: {
		cmp_i128 x = ((const cmp_i128 *)base)[i];
		if (x < 0) {
			v.type = CMP_VINT;
			v.i = (int64_t)x;
		} else {
			v.type = CMP_VUINT;
			v.u = (uint64_t)x;
		}
		v.re = (double)x;
		break;
	}
	case CMP_F32:
	case CMP_F16:
		v.type = CMP_VF32;
		v.re = ((const float *)base)[i];
		break;
	case CMP_DD: {
		/* integral values print as the integers they are */
		double hi = ((const double *)base)[2 * i], lo = ((const double *)base)[2 * i + 1];
		v.type = CMP_VF64;
		v.re = hi;
		if (hi == floor(hi) && fabs(hi) < 0x1p64) {
			cmp_i128 x = (cmp_i128)hi + (cmp_i128)lo;
			if (x >= INT64_MIN && x <= INT64_MAX) {
				v.type = CMP_VINT;
				v.i = (int64_t)x;
			} else if (x >= 0 && x <= (cmp_i128)UINT64_MAX) {
				v.type = CMP_VUINT;
				v.u = (uint64_t)x;
			}
		}
		break;
	}
	case CMP_F64:
		v.type = CMP_VF64;
		v.re = ((const double *)base)[i];
		break;
	case CMP_C64:
		v.type = CMP_VC64;
		v.re = ((const float *)base)[2 * i];
		v.im = ((const float *)base)[2 * i + 1];
		break;
	case CMP_C128:
		v.type = CMP_VC128;
		v.re = ((const double *)base)[2 * i];
		v.im = ((const double *)base)[2 * i + 1];
		break;
	}
	return v;
}

static void set_point(struct cmp_point *p, enum cmp_kind k, const void *r, const void *c, size_t i,
		      uint64_t at, double err)
{
	p->at = at + i;
	p->err = err;
	p->ref = value_at(k, r, i);
	p->cand = value_at(k, c, i);
}

/* ---- ulp distances: floats mapped to unsigned keys in value order ---- */

/* 2^31 + magnitude for positive values, 2^31 - magnitude for negative ones
 * (so -0 and +0 meet), computed without branches: s is all ones for a
 * negative x, and (mag ^ s) - s negates mag then. */
static inline uint32_t f32_key(float x)
{
	uint32_t b;
	memcpy(&b, &x, sizeof b);
	uint32_t mag = b & 0x7fffffffu, s = 0u - (b >> 31);
	return 0x80000000u + ((mag ^ s) - s);
}

static inline uint64_t f64_key(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	uint64_t mag = b & 0x7fffffffffffffffu, s = 0u - (b >> 63);
	return 0x8000000000000000u + ((mag ^ s) - s);
}

static inline uint32_t f32_ulps(float x, float y)
{
	uint32_t a = f32_key(x), b = f32_key(y);
	return (a > b ? a : b) - (a < b ? a : b);
}

static inline uint64_t f64_ulps(double x, double y)
{
	uint64_t a = f64_key(x), b = f64_key(y);
	return (a > b ? a : b) - (a < b ? a : b);
}

/* The ulp key of a float holding a float16 value exactly (the F16 kind's
 * are): the half's magnitude bits (normal: exponent and the top 10 bits of
 * the mantissa; subnormal: the value in units of 2^-24), ordered as
 * f32_key orders floats. */
static inline uint32_t f16_key(float x)
{
	uint32_t b;
	memcpy(&b, &x, sizeof b);
	uint32_t e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
	uint32_t mag = e == 0xffu ? 0x7c00u : e >= 113 ? ((e - 112u) << 10) | (m >> 13)
		     : (uint32_t)(fabsf(x) * 16777216.0f);
	uint32_t s = 0u - (b >> 31);
	return 0x8000u + ((mag ^ s) - s);
}

static inline uint32_t f16_ulps(float x, float y)
{
	uint32_t a = f16_key(x), b = f16_key(y);
	return (a > b ? a : b) - (a < b ? a : b);
}

static inline uint32_t clamp32(uint64_t u) { return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u; }
static inline uint64_t clamp64(uint64_t u) { return u; }

/* ---- the shared tail of every kernel ----
 * Expects, in scope: st, r, c, nvalid, at, the arrays de[] (error), den[]
 * (its denominator, 1 where de is 0) and xr[] (|r|, 0 at NaN positions) of
 * type T, `bad`, and OK_AT(i) telling whether element i passes. */
#define KERNEL_TAIL(T, CT, INF)                                                            \
	do {                                                                               \
		const T gabs = (T)st->max_abs.err, grel = (T)st->max_rel.err;              \
		CT above_abs = 0, above_rel = 0;                                           \
		for (size_t i = 0; i < CMP_BLOCK; i++) {                                   \
			T q = de[i] / den[i];                                              \
			T rel = q != q ? (INF) : q; /* inf / inf */                        \
			above_abs += de[i] > gabs;                                         \
			above_rel += rel > grel;                                           \
		}                                                                          \
		double sd[CMP_LANES] = {0}, sr[CMP_LANES] = {0};                           \
		for (size_t j = 0; j < CMP_BLOCK; j += CMP_LANES)                          \
			for (size_t k = 0; k < CMP_LANES; k++) {                           \
				double a = (double)de[j + k], b = (double)xr[j + k];       \
				sd[k] += a * a;                                            \
				sr[k] += b * b;                                            \
			}                                                                  \
		double tsd = 0, tsr = 0;                                                   \
		for (size_t k = 0; k < CMP_LANES; k++) {                                   \
			tsd += sd[k];                                                      \
			tsr += sr[k];                                                      \
		}                                                                          \
		st->sum_d2 += tsd;                                                         \
		st->sum_r2 += tsr;                                                         \
		st->n += nvalid;                                                           \
		st->mismatches += bad;                                                     \
		if (above_abs)                                                             \
			for (size_t i = 0; i < nvalid; i++)                                \
				if (de[i] > (T)st->max_abs.err)                            \
					set_point(&st->max_abs, st->kind, r, c, i, at, (double)de[i]); \
		if (above_rel)                                                             \
			for (size_t i = 0; i < nvalid; i++) {                              \
				T q = de[i] / den[i];                                      \
				T rel = q != q ? (INF) : q;                                \
				if (rel > (T)st->max_rel.err)                              \
					set_point(&st->max_rel, st->kind, r, c, i, at, (double)rel); \
			}                                                                  \
		if (bad && st->nshown < st->opts.show)                                     \
			for (size_t i = 0; i < nvalid && st->nshown < st->opts.show; i++)  \
				if (!(OK_AT(i)))                                           \
					set_point(&st->shown[st->nshown++], st->kind, r, c, i, at, \
						  (double)de[i]);                          \
	} while (0)

/* ---- float32 / float64 ---- */

/* The element tests, without branches. Flags are integers of the element's
 * width (CT), so a loop that uses them runs on vectors of one lane count. */
#define ELEMENT_TESTS(NAME, T, CT, FABS, TMAX, ULPS, UT)                                    \
	static inline CT NAME##_ok(T x, T y, T atol, T rtol, CT eqnan)                      \
	{                                                                                   \
		CT rn = x != x, cn = y != y, eq = x == y;                                   \
		CT fin = (FABS(x) <= TMAX) & (FABS(y) <= TMAX);                             \
		CT within = FABS(y - x) <= atol + rtol * FABS(x);                           \
		return eq | (fin & within) | (eqnan & rn & cn);                             \
	}                                                                                   \
	static inline CT NAME##_ok_ulp(T x, T y, UT ulp, CT eqnan)                          \
	{                                                                                   \
		CT rn = x != x, cn = y != y, eq = x == y;                                   \
		CT fin = (FABS(x) <= TMAX) & (FABS(y) <= TMAX);                             \
		CT within = ULPS(x, y) <= ulp;                                              \
		return eq | (fin & within) | (eqnan & rn & cn);                             \
	}
ELEMENT_TESTS(f32, float, uint32_t, fabsf, FLT_MAX, f32_ulps, uint32_t)
ELEMENT_TESTS(f16, float, uint32_t, fabsf, FLT_MAX, f16_ulps, uint32_t)
ELEMENT_TESTS(f64, double, uint64_t, fabs, DBL_MAX, f64_ulps, uint64_t)

/* Step 1 for floats: the test (OK, one of the functions above), the NaN
 * pattern and the error of every element, with integer counters as the only
 * reductions. */
#define FLOAT_STEP1(T, CT, FABS, OK)                                                       \
	for (size_t i = 0; i < CMP_BLOCK; i++) {                                           \
		T x = r[i], y = c[i];                                                      \
		CT rn = x != x, cn = y != y, eq = x == y;                                  \
		bad += (OK) ^ 1;                                                           \
		nr += rn & (cn ^ 1);                                                       \
		nc += cn & (rn ^ 1);                                                       \
		nb += rn & cn;                                                             \
		T d = (rn | cn | eq) ? (T)0 : FABS(y - x);                                 \
		de[i] = d;                                                                 \
		den[i] = d == (T)0 ? (T)1 : FABS(x);                                       \
		xr[i] = (rn | cn) ? (T)0 : FABS(x);                                        \
	}

static void ulp_track32(struct cmp_stats *st, const float *r, const float *c, size_t nvalid,
			uint64_t at)
{
	uint32_t best = st->max_ulp.err < 0 ? 0 : (uint32_t)st->max_ulp.err;
	bool any = st->max_ulp.err >= 0, half = st->kind == CMP_F16;
	for (size_t i = 0; i < nvalid; i++) {
		float x = r[i], y = c[i];
		if (x != x || y != y || x == y)
			continue;
		uint32_t u = half ? f16_ulps(x, y) : f32_ulps(x, y);
		if (!any || u > best) {
			best = u;
			any = true;
			set_point(&st->max_ulp, st->kind, r, c, i, at, (double)u);
		}
	}
}

static void ulp_track64(struct cmp_stats *st, const double *r, const double *c, size_t nvalid,
			uint64_t at)
{
	double best = st->max_ulp.err;
	for (size_t i = 0; i < nvalid; i++) {
		double x = r[i], y = c[i];
		if (x != x || y != y || x == y)
			continue;
		double u = (double)f64_ulps(x, y);
		if (u > best) {
			best = u;
			set_point(&st->max_ulp, CMP_F64, r, c, i, at, u);
		}
	}
}

TARGET_CLONES static void kernel_f32(struct cmp_stats *st, const float *restrict r, const float *restrict c,
		       size_t nvalid, uint64_t at)
{
	const float atol = (float)st->opts.atol, rtol = (float)st->opts.rtol;
	const uint32_t ulp = clamp32(st->opts.ulp);
	const uint32_t eqnan = st->opts.equal_nan;
	float de[CMP_BLOCK], den[CMP_BLOCK], xr[CMP_BLOCK];
	uint32_t bad = 0, nr = 0, nc = 0, nb = 0;
	const bool half = st->kind == CMP_F16;
	if (st->opts.by_ulp && half)
		FLOAT_STEP1(float, uint32_t, fabsf, f16_ok_ulp(x, y, ulp, eqnan))
	else if (st->opts.by_ulp)
		FLOAT_STEP1(float, uint32_t, fabsf, f32_ok_ulp(x, y, ulp, eqnan))
	else
		FLOAT_STEP1(float, uint32_t, fabsf, f32_ok(x, y, atol, rtol, eqnan))
	st->nan_ref_only += nr;
	st->nan_cand_only += nc;
	st->nan_both += nb;
#define OK_AT(i) (st->opts.by_ulp ? (half ? f16_ok_ulp(r[i], c[i], ulp, eqnan) : f32_ok_ulp(r[i], c[i], ulp, eqnan)) \
				  : f32_ok(r[i], c[i], atol, rtol, eqnan))
	KERNEL_TAIL(float, uint32_t, INFINITY);
#undef OK_AT
	if (st->opts.by_ulp)
		ulp_track32(st, r, c, nvalid, at);
}

TARGET_CLONES static void kernel_f64(struct cmp_stats *st, const double *restrict r, const double *restrict c,
		       size_t nvalid, uint64_t at)
{
	const double atol = st->opts.atol, rtol = st->opts.rtol;
	const uint64_t ulp = st->opts.ulp;
	const uint64_t eqnan = st->opts.equal_nan;
	double de[CMP_BLOCK], den[CMP_BLOCK], xr[CMP_BLOCK];
	uint64_t bad = 0, nr = 0, nc = 0, nb = 0;
	if (st->opts.by_ulp)
		FLOAT_STEP1(double, uint64_t, fabs, f64_ok_ulp(x, y, ulp, eqnan))
	else
		FLOAT_STEP1(double, uint64_t, fabs, f64_ok(x, y, atol, rtol, eqnan))
	st->nan_ref_only += nr;
	st->nan_cand_only += nc;
	st->nan_both += nb;
#define OK_AT(i) (st->opts.by_ulp ? f64_ok_ulp(r[i], c[i], ulp, eqnan) \
				  : f64_ok(r[i], c[i], atol, rtol, eqnan))
	KERNEL_TAIL(double, uint64_t, INFINITY);
#undef OK_AT
	if (st->opts.by_ulp)
		ulp_track64(st, r, c, nvalid, at);
}

/* ---- integers: exact differences, errors in double ---- */

static inline double abs_i64(int64_t x) { return x < 0 ? -(double)x : (double)x; }
static inline double abs_u64(uint64_t x) { return (double)x; }
static inline double abs_i128(cmp_i128 x) { return x < 0 ? -(double)x : (double)x; }

#define INT_KERNEL(NAME, T, UT, ABS)                                                         \
	static inline int NAME##_ok(T x, T y, double atol, double rtol, bool by_ulp, UT ulp) \
	{                                                                                    \
		UT ad = x > y ? (UT)x - (UT)y : (UT)y - (UT)x;                               \
		double ax = ABS(x);                                                          \
		return by_ulp ? ad <= ulp : (double)ad <= atol + rtol * ax;                  \
	}                                                                                    \
	static void NAME(struct cmp_stats *st, const T *restrict r, const T *restrict c,     \
			 size_t nvalid, uint64_t at)                                         \
	{                                                                                    \
		const double atol = st->opts.atol, rtol = st->opts.rtol;                     \
		const bool by_ulp = st->opts.by_ulp;                                         \
		const UT ulp = (UT)st->opts.ulp;                                             \
		double de[CMP_BLOCK], den[CMP_BLOCK], xr[CMP_BLOCK];                         \
		unsigned bad = 0;                                                            \
		for (size_t i = 0; i < CMP_BLOCK; i++) {                                     \
			T x = r[i], y = c[i];                                                \
			UT ad = x > y ? (UT)x - (UT)y : (UT)y - (UT)x;                       \
			double d = (double)ad, ax = ABS(x);                                  \
			int ok = by_ulp ? ad <= ulp : d <= atol + rtol * ax;                 \
			bad += !ok;                                                          \
			de[i] = d;                                                           \
			den[i] = d == 0 ? 1 : ax;                                            \
			xr[i] = ax;                                                          \
		}                                                                            \
		if (by_ulp)                                                                  \
			for (size_t i = 0; i < nvalid; i++)                                  \
				if (de[i] > st->max_ulp.err)                                 \
					set_point(&st->max_ulp, st->kind, r, c, i, at, de[i]); \
		KERNEL_TAIL(double, uint64_t, INFINITY);                                     \
	}

#define OK_AT(i) NAME_OK(r[i], c[i], atol, rtol, by_ulp, ulp)
#define NAME_OK kernel_i64_ok
INT_KERNEL(kernel_i64, int64_t, uint64_t, abs_i64)
#undef NAME_OK
#define NAME_OK kernel_u64_ok
INT_KERNEL(kernel_u64, uint64_t, uint64_t, abs_u64)
#undef NAME_OK
#define NAME_OK kernel_i128_ok
INT_KERNEL(kernel_i128, cmp_i128, cmp_u128, abs_i128)
#undef NAME_OK
#undef OK_AT

/* ---- complex: moduli, like numpy.isclose on complex arrays ---- */

#define COMPLEX_KERNEL(NAME, T, FABS, HYPOT, TMAX, ULPS, UT, CLAMP)                               \
	static inline int NAME##_ok(const T *x, const T *y, T atol, T rtol, int eqnan,       \
				    bool by_ulp, UT ulp)                                     \
	{                                                                                    \
		int rn = (x[0] != x[0]) | (x[1] != x[1]);                                    \
		int cn = (y[0] != y[0]) | (y[1] != y[1]);                                    \
		int eq = (x[0] == y[0]) & (x[1] == y[1]);                                    \
		int fin = (FABS(x[0]) <= TMAX) & (FABS(x[1]) <= TMAX) &                      \
			  (FABS(y[0]) <= TMAX) & (FABS(y[1]) <= TMAX);                       \
		int within = by_ulp ? (ULPS(x[0], y[0]) <= ulp) && (ULPS(x[1], y[1]) <= ulp)  \
				    : HYPOT(y[0] - x[0], y[1] - x[1]) <= atol + rtol * HYPOT(x[0], x[1]); \
		return eq | (fin & within) | (eqnan & rn & cn);                              \
	}                                                                                    \
	static void NAME(struct cmp_stats *st, const T *restrict r, const T *restrict c,     \
			 size_t nvalid, uint64_t at)                                         \
	{                                                                                    \
		const T atol = (T)st->opts.atol, rtol = (T)st->opts.rtol;                    \
		const int eqnan = st->opts.equal_nan;                                        \
		const bool by_ulp = st->opts.by_ulp;                                         \
		const UT ulp = CLAMP(st->opts.ulp);                                          \
		T de[CMP_BLOCK], den[CMP_BLOCK], xr[CMP_BLOCK];                              \
		unsigned bad = 0, nr = 0, nc = 0, nb = 0;                                    \
		for (size_t i = 0; i < CMP_BLOCK; i++) {                                     \
			const T *x = r + 2 * i, *y = c + 2 * i;                              \
			int rn = (x[0] != x[0]) | (x[1] != x[1]);                            \
			int cn = (y[0] != y[0]) | (y[1] != y[1]);                            \
			int eq = (x[0] == y[0]) & (x[1] == y[1]);                            \
			bad += !NAME##_ok(x, y, atol, rtol, eqnan, by_ulp, ulp);             \
			nr += rn & !cn;                                                      \
			nc += cn & !rn;                                                      \
			nb += rn & cn;                                                       \
			T ar = HYPOT(x[0], x[1]);                                            \
			T d = (rn | cn | eq) ? (T)0 : HYPOT(y[0] - x[0], y[1] - x[1]);       \
			de[i] = d;                                                           \
			den[i] = d == (T)0 ? (T)1 : ar;                                      \
			xr[i] = (rn | cn) ? (T)0 : ar;                                       \
			if (by_ulp && i < nvalid && !(rn | cn | eq)) {                       \
				UT u0 = ULPS(x[0], y[0]), u1 = ULPS(x[1], y[1]);             \
				double u = (double)(u0 > u1 ? u0 : u1);                      \
				if (u > st->max_ulp.err)                                     \
					set_point(&st->max_ulp, st->kind, r, c, i, at, u);   \
			}                                                                    \
		}                                                                            \
		st->nan_ref_only += nr;                                                      \
		st->nan_cand_only += nc;                                                     \
		st->nan_both += nb;                                                          \
		KERNEL_TAIL(T, unsigned, INFINITY);                                          \
	}

#define OK_AT(i) NAME_OK(r + 2 * (i), c + 2 * (i), atol, rtol, eqnan, by_ulp, ulp)
#define NAME_OK kernel_c64_ok
COMPLEX_KERNEL(kernel_c64, float, fabsf, hypotf, FLT_MAX, f32_ulps, uint32_t, clamp32)
#undef NAME_OK
#define NAME_OK kernel_c128_ok
COMPLEX_KERNEL(kernel_c128, double, fabs, hypot, DBL_MAX, f64_ulps, uint64_t, clamp64)
#undef NAME_OK
#undef OK_AT

/* ---- an int64 / uint64 against a float: double-double values ----
 * Each value is hi + lo exactly (lo is 0 for a float). The difference
 * (c.hi - r.hi) + (c.lo - r.lo) is exact where it matters: hi values that
 * are close subtract exactly (Sterbenz), and the lo parts are small
 * integers. --ulp is refused for mixed dtypes before it gets here. */

static inline int dd_ok(const double *x, const double *y, double atol, double rtol, int eqnan)
{
	int rn = x[0] != x[0], cn = y[0] != y[0];
	int eq = (x[0] == y[0]) & (x[1] == y[1]);
	int fin = (fabs(x[0]) <= DBL_MAX) & (fabs(y[0]) <= DBL_MAX);
	double d = fabs((y[0] - x[0]) + (y[1] - x[1]));
	int within = d <= atol + rtol * fabs(x[0] + x[1]);
	return eq | (fin & within) | (eqnan & rn & cn);
}

static void kernel_dd(struct cmp_stats *st, const double *restrict r, const double *restrict c,
		      size_t nvalid, uint64_t at)
{
	const double atol = st->opts.atol, rtol = st->opts.rtol;
	const int eqnan = st->opts.equal_nan;
	double de[CMP_BLOCK], den[CMP_BLOCK], xr[CMP_BLOCK];
	unsigned bad = 0, nr = 0, nc = 0, nb = 0;
	for (size_t i = 0; i < CMP_BLOCK; i++) {
		const double *x = r + 2 * i, *y = c + 2 * i;
		int rn = x[0] != x[0], cn = y[0] != y[0];
		int eq = (x[0] == y[0]) & (x[1] == y[1]);
		bad += !dd_ok(x, y, atol, rtol, eqnan);
		nr += rn & !cn;
		nc += cn & !rn;
		nb += rn & cn;
		double ar = fabs(x[0] + x[1]);
		double d = (rn | cn | eq) ? 0 : fabs((y[0] - x[0]) + (y[1] - x[1]));
		de[i] = d;
		den[i] = d == 0 ? 1 : ar;
		xr[i] = (rn | cn) ? 0 : ar;
	}
	st->nan_ref_only += nr;
	st->nan_cand_only += nc;
	st->nan_both += nb;
#define OK_AT(i) dd_ok(r + 2 * (i), c + 2 * (i), atol, rtol, eqnan)
	KERNEL_TAIL(double, unsigned, INFINITY);
#undef OK_AT
}

void cmp_block(struct cmp_stats *st, const void *ref, const void *cand, size_t n, uint64_t at)
{
	/* A short block is padded with zeros on both sides: they pass and add nothing. */
	_Alignas(64) unsigned char pr[CMP_BLOCK * 16], pc[CMP_BLOCK * 16];
	if (n == 0)
		return;
	if (n < CMP_BLOCK) {
		size_t sz = cmp_kind_size(st->kind);
		memset(pr, 0, CMP_BLOCK * sz);
		memset(pc, 0, CMP_BLOCK * sz);
		memcpy(pr, ref, n * sz);
		memcpy(pc, cand, n * sz);
		ref = pr;
		cand = pc;
	}
	switch (st->kind) {
	case CMP_I64: kernel_i64(st, ref, cand, n, at); break;
	case CMP_U64: kernel_u64(st, ref, cand, n, at); break;
	case CMP_I128: kernel_i128(st, ref, cand, n, at); break;
	case CMP_F32:
	case CMP_F16: kernel_f32(st, ref, cand, n, at); break;
	case CMP_DD: kernel_dd(st, ref, cand, n, at); break;
	case CMP_F64: kernel_f64(st, ref, cand, n, at); break;
	case CMP_C64: kernel_c64(st, ref, cand, n, at); break;
	case CMP_C128: kernel_c128(st, ref, cand, n, at); break;
	}
}

/* ---- types, tolerances, conversion ---- */

static bool big_int(const struct npy_dtype *d)
{
	return (d->kind == 'i' || d->kind == 'u') && d->size >= 4;
}

enum cmp_kind cmp_kind_for(const struct npy_dtype *a, const struct npy_dtype *b)
{
	bool cplx = a->kind == 'c' || b->kind == 'c';
	bool flt = a->kind == 'f' || b->kind == 'f';
	bool wide = (a->kind == 'c' && a->size == 16) || (b->kind == 'c' && b->size == 16) ||
		    (a->kind == 'f' && a->size == 8) || (b->kind == 'f' && b->size == 8);
	bool int64 = ((a->kind == 'i' || a->kind == 'u') && a->size == 8) ||
		     ((b->kind == 'i' || b->kind == 'u') && b->size == 8);
	if (cplx)
		return wide || big_int(a) || big_int(b) ? CMP_C128 : CMP_C64;
	if (flt && int64)
		return CMP_DD; /* float64 would round the integers */
	if (flt && a->kind == 'f' && b->kind == 'f' && a->size == 2 && b->size == 2)
		return CMP_F16;
	if (flt)
		return wide || big_int(a) || big_int(b) ? CMP_F64 : CMP_F32;
	bool u64 = (a->kind == 'u' && a->size == 8) || (b->kind == 'u' && b->size == 8);
	bool sgn = a->kind == 'i' || b->kind == 'i';
	if (u64)
		return sgn ? CMP_I128 : CMP_U64;
	return CMP_I64;
}

void cmp_default_tol(const struct npy_dtype *dt, double *rtol, double *atol)
{
	unsigned unit = dt->kind == 'c' ? dt->size / 2u : dt->size;
	if (dt->kind != 'f' && dt->kind != 'c') {
		*rtol = 0;
		*atol = 0;
	} else if (unit == 2) {
		*rtol = 1e-3;
		*atol = 1e-5;
	} else if (unit == 4) {
		*rtol = 1.3e-6;
		*atol = 1e-5;
	} else {
		*rtol = 1e-7;
		*atol = 1e-7;
	}
}

bool cmp_direct(enum cmp_kind k, const struct npy_dtype *dt)
{
	if (dt->swap)
		return false;
	switch (k) {
	case CMP_F32: return dt->kind == 'f' && dt->size == 4;
	case CMP_F64: return dt->kind == 'f' && dt->size == 8;
	case CMP_C64: return dt->kind == 'c' && dt->size == 8;
	case CMP_C128: return dt->kind == 'c' && dt->size == 16;
	case CMP_I64: return dt->kind == 'i' && dt->size == 8;
	case CMP_U64: return dt->kind == 'u' && dt->size == 8;
	case CMP_I128:
	case CMP_F16:
	case CMP_DD: return false;
	}
	return false;
}

static void byteswap(unsigned char *p, size_t n, unsigned unit)
{
	if (unit == 2) {
		for (size_t i = 0; i < n; i++) {
			uint16_t v;
			memcpy(&v, p + 2 * i, 2);
			v = __builtin_bswap16(v);
			memcpy(p + 2 * i, &v, 2);
		}
	} else if (unit == 4) {
		for (size_t i = 0; i < n; i++) {
			uint32_t v;
			memcpy(&v, p + 4 * i, 4);
			v = __builtin_bswap32(v);
			memcpy(p + 4 * i, &v, 4);
		}
	} else if (unit == 8) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v;
			memcpy(&v, p + 8 * i, 8);
			v = __builtin_bswap64(v);
			memcpy(p + 8 * i, &v, 8);
		}
	}
}

/* Real source values s[0..n) of type ST (an integer type when INT) to kind k. */
#define CONVERT_REAL(ST) CONVERT_REAL_AS(ST, 1)
#define CONVERT_FLOAT(ST) CONVERT_REAL_AS(ST, 0)
#define CONVERT_REAL_AS(ST, INT)                                                             \
	do {                                                                                 \
		const ST *s = (const ST *)(const void *)tmp;                                 \
		switch (k) {                                                                 \
		case CMP_DD:                                                                 \
			for (size_t i = 0; i < n; i++) {                                     \
				double h = (double)s[i];                                     \
				((double *)dst)[2 * i] = h;                                  \
				((double *)dst)[2 * i + 1] =                                 \
					INT ? (double)((cmp_i128)s[i] - (cmp_i128)h) : 0.0;  \
			}                                                                    \
			break;                                                               \
		case CMP_I64: for (size_t i = 0; i < n; i++) ((int64_t *)dst)[i] = (int64_t)s[i]; break; \
		case CMP_U64: for (size_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = (uint64_t)s[i]; break; \
		case CMP_I128: for (size_t i = 0; i < n; i++) ((cmp_i128 *)dst)[i] = (cmp_i128)s[i]; break; \
		case CMP_F32:                                                                \
		case CMP_F16: for (size_t i = 0; i < n; i++) ((float *)dst)[i] = (float)s[i]; break; \
		case CMP_F64: for (size_t i = 0; i < n; i++) ((double *)dst)[i] = (double)s[i]; break; \
		case CMP_C64:                                                                \
			for (size_t i = 0; i < n; i++) {                                     \
				((float *)dst)[2 * i] = (float)s[i];                         \
				((float *)dst)[2 * i + 1] = 0;                               \
			}                                                                    \
			break;                                                               \
		case CMP_C128:                                                               \
			for (size_t i = 0; i < n; i++) {                                     \
				((double *)dst)[2 * i] = (double)s[i];                       \
				((double *)dst)[2 * i + 1] = 0;                              \
			}                                                                    \
			break;                                                               \
		}                                                                            \
	} while (0)

void cmp_convert(enum cmp_kind k, const struct npy_dtype *dt, const unsigned char *src, size_t n,
		 void *dst)
{
	_Alignas(64) unsigned char tmp[CMP_BLOCK * 16];
	if (n > CMP_BLOCK)
		n = CMP_BLOCK;
	memcpy(tmp, src, n * dt->size);
	unsigned unit = dt->kind == 'c' ? dt->size / 2u : dt->size;
	if (dt->swap)
		byteswap(tmp, n * dt->size / unit, unit);
	switch (dt->kind) {
	case 'b':
		for (size_t i = 0; i < n; i++)
			tmp[i] = tmp[i] != 0;
		CONVERT_REAL(uint8_t);
		break;
	case 'i':
		if (dt->size == 1) CONVERT_REAL(int8_t);
		else if (dt->size == 2) CONVERT_REAL(int16_t);
		else if (dt->size == 4) CONVERT_REAL(int32_t);
		else CONVERT_REAL(int64_t);
		break;
	case 'u':
		if (dt->size == 1) CONVERT_REAL(uint8_t);
		else if (dt->size == 2) CONVERT_REAL(uint16_t);
		else if (dt->size == 4) CONVERT_REAL(uint32_t);
		else CONVERT_REAL(uint64_t);
		break;
	case 'f':
		if (dt->size == 2) {
			/* Widen in place from the end: floats take twice the room. */
			for (size_t i = n; i-- > 0;) {
				uint16_t h;
				memcpy(&h, tmp + 2 * i, 2);
				float f = npy_half_to_float(h);
				memcpy(tmp + 4 * i, &f, 4);
			}
			CONVERT_FLOAT(float);
		} else if (dt->size == 4) {
			CONVERT_FLOAT(float);
		} else {
			CONVERT_FLOAT(double);
		}
		break;
	case 'c':
		if (k == CMP_C64 && dt->size == 8) {
			memcpy(dst, tmp, n * 8);
		} else if (k == CMP_C128 && dt->size == 16) {
			memcpy(dst, tmp, n * 16);
		} else if (k == CMP_C128) {
			const float *s = (const float *)(const void *)tmp;
			for (size_t i = 0; i < 2 * n; i++)
				((double *)dst)[i] = (double)s[i];
		}
		break;
	}
}
