/* compare: the element-by-element comparison behind `gpuopt verify`, and the
 * statistics its report needs. Two arrays are fed in blocks of at most
 * CMP_BLOCK elements, in one of a few kernel types (cmp_kind_for picks the
 * type both sides convert to); everything learnt accumulates in a struct
 * cmp_stats whose size does not depend on the arrays', so a comparison of
 * any size runs in constant memory.
 *
 * The test, for a reference element r and a candidate element c:
 *
 *   pass  if  c == r                       (same value, same-sign infinity)
 *         or  both finite and |c - r| <= atol + rtol * |r|
 *             (with by_ulp instead: at most `ulp` representable values apart)
 *         or  both NaN and equal_nan
 *
 * REFERENCE is r: the test is numpy.isclose(cand, ref) and, like it,
 * float32 data are compared in float32 arithmetic (float16 in float32),
 * float64 in float64; complex values use their modulus |c - r| and |r|.
 * Integers are compared exactly unless tolerances are given (then in double
 * with the difference taken exactly). Unlike numpy, an int64 or uint64
 * against a float is not rounded to float64 first: the difference is exact.
 * Ulps are counted in the arrays' own type (float16 ulps for float16).
 *
 * Ownership: a cmp_stats holds no pointers; nothing here allocates. */
#ifndef GPUOPT_COMPARE_H
#define GPUOPT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/npy.h"

enum { CMP_BLOCK = 1024, CMP_MAX_SHOW = 100 };

/* The types the kernels compare in. */
enum cmp_kind {
	CMP_I64,  /* bool, int8-int64, uint8-uint32 */
	CMP_U64,  /* uint64 (with unsigned or bool) */
	CMP_I128, /* uint64 against a signed integer: exact in 128 bits */
	CMP_F32,  /* float32 (and float16 or small integers against it) */
	CMP_F64,
	CMP_C64,  /* interleaved (re, im) float pairs */
	CMP_C128,
	CMP_F16,  /* float16 against float16: float32 values and arithmetic, ulps of float16 */
	CMP_DD,   /* int64 / uint64 against a float: each value a pair of doubles (hi, lo)
		   * whose sum is exact, so 2**53 + 1 and 2**53 stay apart */
};

struct cmp_opts {
	double rtol, atol;
	bool equal_nan;
	bool by_ulp;  /* the ulp test instead of rtol / atol */
	uint64_t ulp;
	unsigned show; /* first mismatches to keep, at most CMP_MAX_SHOW */
};

/* One element's value, enough to print it exactly. */
struct cmp_value {
	enum { CMP_VINT, CMP_VUINT, CMP_VF32, CMP_VF64, CMP_VC64, CMP_VC128 } type;
	int64_t i;
	uint64_t u;
	double re, im;
};

struct cmp_point {
	uint64_t at;  /* position in the order the blocks were fed */
	double err;   /* the error measured there (absolute, relative or ulps) */
	struct cmp_value ref, cand;
};

struct cmp_stats {
	enum cmp_kind kind;
	struct cmp_opts opts;
	uint64_t n;             /* elements compared */
	uint64_t mismatches;    /* elements that fail the test, NaN-pattern ones included */
	uint64_t nan_ref_only;  /* NaN in the reference, not in the candidate */
	uint64_t nan_cand_only; /* NaN in the candidate, not in the reference */
	uint64_t nan_both;      /* NaN on both sides (a mismatch only without equal_nan) */
	/* Largest errors, over the elements where neither side is NaN; the first
	 * position wins a tie. err is -1 until an element is seen. Relative error
	 * is |c - r| / |r|: infinite where r is 0 and c is not. */
	struct cmp_point max_abs, max_rel;
	struct cmp_point max_ulp; /* by_ulp only */
	double sum_d2, sum_r2;    /* sums of |c - r|^2 and |r|^2, NaN positions left out */
	unsigned nshown;
	struct cmp_point shown[CMP_MAX_SHOW]; /* the first mismatches, in order */
};

/* Starts a comparison of kind k. */
void cmp_init(struct cmp_stats *st, enum cmp_kind k, const struct cmp_opts *o);

/* Compares n (1..CMP_BLOCK) elements: ref and cand hold n values of the
 * stats' kind, in this machine's byte order and aligned for that type.
 * `at` is the position of the first one (positions in cmp_point). */
void cmp_block(struct cmp_stats *st, const void *ref, const void *cand, size_t n, uint64_t at);

/* ||cand - ref|| / ||ref|| over the non-NaN elements (0 when both are 0,
 * infinite when only the reference is 0). */
double cmp_rel_l2(const struct cmp_stats *st);

/* Bytes per element of a kind. */
size_t cmp_kind_size(enum cmp_kind k);

/* The type two dtypes are compared in (numpy's promotion, except that
 * integers stay exact and float16 is computed in float32). */
enum cmp_kind cmp_kind_for(const struct npy_dtype *a, const struct npy_dtype *b);

/* The defaults of torch.testing.assert_close for a dtype. */
void cmp_default_tol(const struct npy_dtype *dt, double *rtol, double *atol);

/* True when elements of dt, when aligned, already are elements of kind k. */
bool cmp_direct(enum cmp_kind k, const struct npy_dtype *dt);

/* Converts n (at most CMP_BLOCK) elements of dtype dt at src (file byte
 * order, any alignment) to kind k at dst, which is aligned for k. Only the
 * conversions cmp_kind_for can ask for are supported. */
void cmp_convert(enum cmp_kind k, const struct npy_dtype *dt, const unsigned char *src, size_t n,
		 void *dst);

#endif
