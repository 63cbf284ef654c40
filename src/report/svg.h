/* svg: the two plots of the report, as inline SVG text — a strip plot of
 * every measured run's wall time (one row per command, each run a dot, the
 * median a bar), and a forest plot of speedups with their 95% intervals on
 * a log scale, the no-difference band shaded. Sizes are fixed so the page
 * lays out the same everywhere; text is real SVG text (selectable,
 * printable). */
#ifndef GPUOPT_REPORT_SVG_H
#define GPUOPT_REPORT_SVG_H

#include <stddef.h>

#include "core/util.h"

struct strip_row {
	const char *label;
	const double *x;      /* seconds */
	size_t n;
	double median;
};

/* Appends an <svg> with one row per entry; nothing when no row has a run. */
void svg_strip(struct buf *b, const struct strip_row *rows, size_t nrows);

struct forest_row {
	const char *label;
	double est, lo, hi;   /* speedups (> 0) */
};

/* Appends an <svg> forest plot; min_effect (a fraction) sets the band. */
void svg_forest(struct buf *b, const struct forest_row *rows, size_t nrows, double min_effect);

/* "12.3 ms"-style, three significant digits; "-" for NaN. */
void format_seconds(char *out, size_t n, double s);

/* Appends s escaped for HTML text and attribute values. */
void html_escape(struct buf *b, const char *s);

#endif
