/* stats: robust summaries of timing samples and a seeded, reproducible
 * bootstrap for the confidence interval of a speedup.
 *
 * Quantiles interpolate linearly between order statistics (Hyndman & Fan
 * type 7, numpy's default). Outliers follow Iglewicz & Hoaglin: a value is an
 * outlier when its modified z-score 0.6745 * |x - median| / MAD exceeds 3.5
 * (STATS_OUTLIER_RULE); with MAD = 0 nothing is called an outlier.
 *
 * Every function takes its inputs read-only and allocates only scratch
 * memory that it frees; nothing here fails except by running out of memory
 * (x*alloc exits). Functions given no samples return NaN. */
#ifndef GPUOPT_STATS_H
#define GPUOPT_STATS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_OUTLIER_RULE \
	"modified z-score 0.6745*|x - median|/MAD > 3.5 (Iglewicz & Hoaglin); none when MAD = 0"
#define STATS_OUTLIER_Z 3.5

/* xoshiro256** seeded through splitmix64: the same seed gives the same
 * sequence on every platform. */
struct rng {
	uint64_t s[4];
};
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Fisher-Yates shuffle of n indices. */
void rng_shuffle(struct rng *r, size_t *items, size_t n);

struct summary {
	size_t n;
	double median, mean, sd, mad;   /* sd: sample (n - 1); NaN when n < 2. mad: raw, unscaled */
	double min, max, p5, p95;
	size_t outliers_low, outliers_high;
};

/* Summarizes x[0..n). */
void stats_summarize(const double *x, size_t n, struct summary *s);

/* Quantile q in [0, 1] of sorted[0..n), type 7. */
double stats_quantile_sorted(const double *sorted, size_t n, double q);

/* Median of x[0..n) (x untouched). */
double stats_median(const double *x, size_t n);

/* Median of x[0..n), reordering x in place (expected linear time). */
double stats_median_inplace(double *x, size_t n);

struct interval {
	double estimate, lo, hi;   /* the statistic on the data, and its CI bounds */
};

/* Speedup median(a) / median(b) over n paired observations (a[i] and b[i]
 * belong together: the same round), with a percentile bootstrap interval at
 * level (e.g. 0.95) from `resamples` resamples of whole pairs drawn with a
 * PRNG seeded with seed. Same inputs and seed, same interval. */
void stats_ratio_ci(const double *a, const double *b, size_t n, size_t resamples, double level,
		    uint64_t seed, struct interval *out);

/* The median of x with its percentile bootstrap interval, likewise. */
void stats_median_ci(const double *x, size_t n, size_t resamples, double level, uint64_t seed,
		     struct interval *out);

#endif
