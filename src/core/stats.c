/* stats: see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	/* Lemire's multiply-and-shift with rejection of the biased low part. */
	__extension__ typedef unsigned __int128 u128;
	u128 m = (u128)rng_next(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t threshold = (0 - n) % n;
		while (low < threshold) {
			m = (u128)rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

void rng_shuffle(struct rng *r, size_t *items, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_below(r, i);
		size_t t = items[i - 1];
		items[i - 1] = items[j];
		items[j] = t;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	if (lo >= n - 1)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

/* Moves the k-th smallest of x[0..n) to x[k], with nothing larger before it
 * and nothing smaller after it (Wirth's selection; expected linear time). */
static void select_kth(double *x, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	while (lo < hi) {
		double pivot = x[kk];
		ptrdiff_t i = lo, j = hi;
		do {
			while (x[i] < pivot)
				i++;
			while (pivot < x[j])
				j--;
			if (i <= j) {
				double t = x[i];
				x[i] = x[j];
				x[j] = t;
				i++;
				j--;
			}
		} while (i <= j);
		if (j < kk)
			lo = i;
		if (kk < i)
			hi = j;
	}
}

double stats_median_inplace(double *x, size_t n)
{
	if (n == 0)
		return NAN;
	size_t k = n / 2;
	select_kth(x, n, k);
	double upper = x[k];
	if (n % 2)
		return upper;
	double lower = x[0];
	for (size_t i = 1; i < k; i++)
		if (x[i] > lower)
			lower = x[i];
	return (lower + upper) / 2;
}

double stats_median(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double *t = xmalloc(n * sizeof *t);
	memcpy(t, x, n * sizeof *t);
	double m = stats_median_inplace(t, n);
	free(t);
	return m;
}

void stats_summarize(const double *x, size_t n, struct summary *s)
{
	memset(s, 0, sizeof *s);
	s->n = n;
	if (n == 0) {
		s->median = s->mean = s->sd = s->mad = s->min = s->max = s->p5 = s->p95 = NAN;
		return;
	}
	double *t = xmalloc(n * sizeof *t);
	memcpy(t, x, n * sizeof *t);
	qsort(t, n, sizeof *t, cmp_double);
	s->min = t[0];
	s->max = t[n - 1];
	s->median = stats_quantile_sorted(t, n, 0.5);
	s->p5 = stats_quantile_sorted(t, n, 0.05);
	s->p95 = stats_quantile_sorted(t, n, 0.95);
	/* Mean and variance by Welford, stable for close values. */
	double mean = 0, m2 = 0;
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - mean;
		mean += d / (double)(i + 1);
		m2 += d * (x[i] - mean);
	}
	s->mean = mean;
	s->sd = n > 1 ? sqrt(m2 / (double)(n - 1)) : NAN;
	for (size_t i = 0; i < n; i++)
		t[i] = fabs(x[i] - s->median);
	s->mad = stats_median_inplace(t, n);
	if (s->mad > 0) {
		for (size_t i = 0; i < n; i++) {
			double z = 0.6745 * (x[i] - s->median) / s->mad;
			if (z > STATS_OUTLIER_Z)
				s->outliers_high++;
			else if (z < -STATS_OUTLIER_Z)
				s->outliers_low++;
		}
	}
	free(t);
}

static void percentile_interval(double *stat, size_t resamples, double level, struct interval *out)
{
	qsort(stat, resamples, sizeof *stat, cmp_double);
	double tail = (1 - level) / 2;
	out->lo = stats_quantile_sorted(stat, resamples, tail);
	out->hi = stats_quantile_sorted(stat, resamples, 1 - tail);
}

/* A resample only changes how often each observation is drawn, so it is
 * kept as counts over the observations in sorted order: its median is then
 * found by one scan, without copying or selecting values. */
struct ranked {
	double *sorted;    /* the values, ascending */
	size_t *rank;      /* rank[i]: where x[i] sits in sorted */
	unsigned *count;   /* draws per rank in the current resample */
};

static int cmp_index(const void *a, const void *b, void *base)
{
	const double *v = base;
	double x = v[*(const size_t *)a], y = v[*(const size_t *)b];
	return (x > y) - (x < y);
}

static void ranked_init(struct ranked *r, const double *x, size_t n)
{
	size_t *order = xmalloc(n * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, cmp_index, (void *)x);
	r->sorted = xmalloc(n * sizeof *r->sorted);
	r->rank = xmalloc(n * sizeof *r->rank);
	r->count = xcalloc(n, sizeof *r->count);
	for (size_t k = 0; k < n; k++) {
		r->sorted[k] = x[order[k]];
		r->rank[order[k]] = k;
	}
	free(order);
}

static void ranked_free(struct ranked *r)
{
	free(r->sorted);
	free(r->rank);
	free(r->count);
}

/* The median of the resample held in r->count (n draws); clears the counts. */
static double ranked_median(struct ranked *r, size_t n)
{
	size_t lo_pos = (n - 1) / 2, hi_pos = n / 2, seen = 0;
	double lo = NAN, hi = NAN;
	for (size_t k = 0; k < n; k++) {
		if (r->count[k] == 0)
			continue;
		size_t next = seen + r->count[k];
		if (isnan(lo) && lo_pos < next)
			lo = r->sorted[k];
		if (hi_pos < next) {
			hi = r->sorted[k];
			break;
		}
		seen = next;
	}
	memset(r->count, 0, n * sizeof *r->count);
	return (lo + hi) / 2;
}

void stats_ratio_ci(const double *a, const double *b, size_t n, size_t resamples, double level,
		    uint64_t seed, struct interval *out)
{
	out->estimate = out->lo = out->hi = NAN;
	if (n == 0)
		return;
	out->estimate = stats_median(a, n) / stats_median(b, n);
	if (resamples == 0)
		return;
	struct rng r;
	rng_seed(&r, seed);
	struct ranked ra, rb;
	ranked_init(&ra, a, n);
	ranked_init(&rb, b, n);
	double *stat = xmalloc(resamples * sizeof *stat);
	for (size_t k = 0; k < resamples; k++) {
		for (size_t i = 0; i < n; i++) {
			size_t j = (size_t)rng_below(&r, n);
			ra.count[ra.rank[j]]++;
			rb.count[rb.rank[j]]++;
		}
		double ma = ranked_median(&ra, n);
		stat[k] = ma / ranked_median(&rb, n);
	}
	percentile_interval(stat, resamples, level, out);
	ranked_free(&ra);
	ranked_free(&rb);
	free(stat);
}

void stats_median_ci(const double *x, size_t n, size_t resamples, double level, uint64_t seed,
		     struct interval *out)
{
	out->estimate = out->lo = out->hi = NAN;
	if (n == 0)
		return;
	out->estimate = stats_median(x, n);
	if (resamples == 0)
		return;
	struct rng r;
	rng_seed(&r, seed);
	struct ranked rx;
	ranked_init(&rx, x, n);
	double *stat = xmalloc(resamples * sizeof *stat);
	for (size_t k = 0; k < resamples; k++) {
		for (size_t i = 0; i < n; i++)
			rx.count[rx.rank[(size_t)rng_below(&r, n)]]++;
		stat[k] = ranked_median(&rx, n);
	}
	percentile_interval(stat, resamples, level, out);
	ranked_free(&rx);
	free(stat);
}
