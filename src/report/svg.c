/* svg: see svg.h. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void html_escape(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		case '\'': buf_puts(b, "&#39;"); break;
		default:
			/* control characters other than tab and newline have no place in a page */
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				buf_putc(b, ' ');
			else
				buf_putc(b, *s);
		}
	}
}

/* A "nice" step (1, 2 or 5 times a power of ten) giving about n ticks over span. */
static double nice_step(double span, int n)
{
	if (!(span > 0) || !isfinite(span))
		return 1;
	double raw = span / n, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

void format_seconds(char *out, size_t n, double s)
{
	if (!isfinite(s))
		snprintf(out, n, "-");
	else if (s == 0)
		snprintf(out, n, "0");
	else if (s >= 1)
		snprintf(out, n, "%.3g s", s);
	else if (s >= 1e-3)
		snprintf(out, n, "%.3g ms", s * 1e3);
	else
		snprintf(out, n, "%.3g us", s * 1e6);
}

#define LEFT 170.0
#define WIDTH 720.0
#define RIGHT 30.0

void svg_strip(struct buf *b, const struct strip_row *rows, size_t nrows)
{
	double xmax = 0;
	size_t total = 0;
	for (size_t r = 0; r < nrows; r++)
		for (size_t i = 0; i < rows[r].n; i++)
			if (isfinite(rows[r].x[i]) && rows[r].x[i] > xmax)
				xmax = rows[r].x[i];
	for (size_t r = 0; r < nrows; r++)
		total += rows[r].n;
	if (!total || !(xmax > 0))
		return;
	xmax *= 1.08;
	double row_h = 34, top = 10, plot_w = WIDTH - LEFT - RIGHT;
	double height = top + row_h * (double)nrows + 34;
	buf_printf(b, "<svg class=\"plot\" role=\"img\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
		      "xmlns=\"http://www.w3.org/2000/svg\"><title>wall time of every measured run</title>\n",
		   WIDTH, height, WIDTH, height);
	double step = nice_step(xmax, 6);
	for (double t = 0; t <= xmax + 1e-12 && step > 0; t += step) {
		double x = LEFT + plot_w * t / xmax;
		char lab[32];
		format_seconds(lab, sizeof lab, t);
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
			   x, top, x, top + row_h * (double)nrows, x, top + row_h * (double)nrows + 16, lab);
	}
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" text-anchor=\"middle\">wall time per run</text>\n",
		   LEFT + plot_w / 2, height - 2);
	for (size_t r = 0; r < nrows; r++) {
		double y0 = top + row_h * (double)r, yc = y0 + row_h / 2;
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"end\">", LEFT - 10, yc + 4);
		html_escape(b, rows[r].label);
		buf_puts(b, "</text>\n");
		for (size_t i = 0; i < rows[r].n; i++) {
			double v = rows[r].x[i];
			if (!isfinite(v) || v < 0)
				continue;
			/* a fixed jitter from the index, so the page is the same every time */
			double j = ((double)((i * 2654435761u) % 1000) / 1000.0 - 0.5) * (row_h * 0.55);
			buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" class=\"dot%zu\"/>", LEFT + plot_w * v / xmax,
				   yc + j, r % 2);
		}
		if (isfinite(rows[r].median) && rows[r].median >= 0) {
			double x = LEFT + plot_w * rows[r].median / xmax;
			char lab[32];
			format_seconds(lab, sizeof lab, rows[r].median);
			buf_printf(b, "\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"median\"/>"
				      "<title>median %s</title>\n", x, y0 + 4, x, y0 + row_h - 4, lab);
		}
	}
	buf_puts(b, "</svg>\n");
}

void svg_forest(struct buf *b, const struct forest_row *rows, size_t nrows, double min_effect)
{
	double lo = 1 / (1 + min_effect), hi = 1 + min_effect;
	size_t shown = 0;
	for (size_t r = 0; r < nrows; r++) {
		if (!(rows[r].est > 0) || !isfinite(rows[r].est))
			continue;
		shown++;
		if (rows[r].lo > 0 && rows[r].lo < lo)
			lo = rows[r].lo;
		if (isfinite(rows[r].hi) && rows[r].hi > hi)
			hi = rows[r].hi;
		if (rows[r].est < lo)
			lo = rows[r].est;
		if (rows[r].est > hi)
			hi = rows[r].est;
	}
	if (!shown)
		return;
	double l0 = log(lo / 1.3), l1 = log(hi * 1.3);
	double row_h = 30, top = 10, plot_w = WIDTH - LEFT - RIGHT - 60;
	double height = top + row_h * (double)shown + 36;
#define XOF(v) (LEFT + plot_w * (log(v) - l0) / (l1 - l0))
	buf_printf(b, "<svg class=\"plot\" role=\"img\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
		      "xmlns=\"http://www.w3.org/2000/svg\"><title>speedup over the baseline, 95%% interval</title>\n",
		   WIDTH, height, WIDTH, height);
	double bottom = top + row_h * (double)shown;
	double e0 = 1 / (1 + min_effect), e1 = 1 + min_effect;
	buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"band\"><title>no difference: "
		      "within %.0f%% of the baseline</title></rect>\n",
		   XOF(e0), top, XOF(e1) - XOF(e0), bottom - top, 100 * min_effect);
	static const double ticks[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
	for (size_t t = 0; t < sizeof ticks / sizeof *ticks; t++) {
		double v = ticks[t];
		if (log(v) < l0 || log(v) > l1)
			continue;
		buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"%s\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%gx</text>\n",
			   XOF(v), top, XOF(v), bottom, v == 1 ? "one" : "grid", XOF(v), bottom + 16, v);
	}
	buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"axis\" text-anchor=\"middle\">speedup (baseline time / "
		      "candidate time), log scale</text>\n", LEFT + plot_w / 2, height - 2);
	size_t k = 0;
	for (size_t r = 0; r < nrows; r++) {
		const struct forest_row *f = &rows[r];
		if (!(f->est > 0) || !isfinite(f->est))
			continue;
		double yc = top + row_h * ((double)k + 0.5);
		k++;
		buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"end\">", LEFT - 10, yc + 4);
		html_escape(b, f->label);
		buf_puts(b, "</text>");
		const char *cls = f->lo > e1 ? "faster" : f->hi < e0 ? "slower" : "same";
		if (f->lo > 0 && isfinite(f->hi) && f->hi > 0)
			buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ci %s\"/>", XOF(f->lo), yc,
				   XOF(f->hi), yc, cls);
		buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" class=\"est %s\"/>"
			      "<text x=\"%.1f\" y=\"%.1f\" class=\"value\">%.3gx</text>\n",
			   XOF(f->est), yc, cls, LEFT + plot_w + 10, yc + 4, f->est);
	}
#undef XOF
	buf_puts(b, "</svg>\n");
}
