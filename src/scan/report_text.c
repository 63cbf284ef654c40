/* report_text: the human rendering of a scan. Per file: one headline per
 * library with its GPU path and first step, then the findings that stand
 * out (severity warning or error) with a code frame, then, with --verbose,
 * every remaining site on one line. Colour only when asked for. Paths,
 * messages (which quote the code) and source lines go out made safe for a
 * terminal (core/diag.h). */
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "core/paths.h"
#include "report.h"

struct style {
	const char *bold, *dim, *red, *yellow, *cyan, *green, *reset;
};

static const struct style plain = {"", "", "", "", "", "", ""};
static const struct style ansi = {"\033[1m", "\033[2m", "\033[31m", "\033[33m", "\033[36m",
				  "\033[32m", "\033[0m"};

static const char *sev_color(const struct style *s, enum severity v)
{
	return v == SEV_ERROR ? s->red : v == SEV_WARNING ? s->yellow : s->cyan;
}

static void location(FILE *out, const struct scan_file *sf, const struct finding *f)
{
	term_safe_fputs(sf->path, out);
	if (sf->notebook)
		fprintf(out, ":cell %u:%u:%u", f->cell, f->line, f->col);
	else
		fprintf(out, ":%u:%u", f->line, f->col);
}

/* The source line with carets under the finding's span. A character the
 * terminal must not receive raw (a control character in a string literal)
 * is shown escaped (term_safe_append), and its carets take as many columns. */
static void frame(FILE *out, const struct style *s, const struct finding *f)
{
	if (!f->line_text)
		return;
	const unsigned char *p = (const unsigned char *)f->line_text;
	uint32_t start = f->col, end = f->end_line == f->line ? f->end_col : 0;
	struct buf line = {0}, marks = {0};
	bool marked = false;
	uint32_t col = 1;
	/* at most 160 characters from where the line's indentation ends */
	for (; *p && col <= 160; col++) {
		size_t n = 1;
		if (*p >= 0xC0)
			while (n < 4 && (p[n] & 0xC0) == 0x80)
				n++;
		size_t before = line.len;
		if (*p == '\t')
			buf_putc(&line, ' ');
		else
			term_safe_append(&line, (const char *)p, n);
		size_t cols = line.len - before == n ? 1 : line.len - before;
		bool mark = col >= start && (end > start ? col < end : true);
		for (size_t k = 0; k < cols; k++)
			buf_putc(&marks, mark ? '^' : ' ');
		marked |= mark;
		p += n;
	}
	/* a span that runs past the line's end (or starts there): carets on */
	for (uint32_t c = col > start ? col : start; end > start ? c < end && c <= 160 : !marked; c++) {
		buf_putc(&marks, '^');
		marked = true;
	}
	/* the spaces, then the carets in colour, without the spaces after them */
	size_t lead = 0, last = marks.len;
	while (lead < marks.len && marks.data[lead] == ' ')
		lead++;
	while (last > lead && marks.data[last - 1] == ' ')
		last--;
	fprintf(out, "    %s%5u |%s %s\n", s->dim, f->line, s->reset, line.data ? line.data : "");
	fprintf(out, "    %s      |%s %.*s%s%.*s%s\n", s->dim, s->reset, (int)lead, marks.data,
		sev_color(s, f->rule->severity), (int)(last - lead), marks.data + lead, s->reset);
	buf_free(&line);
	buf_free(&marks);
}

#define MAX_TARGETS 4

/* One headline: a library, its GPU paths (with call counts and the first
 * step of each) and how many of its calls stand out below. */
struct group {
	const char *library, *display;
	struct {
		const char *target, *headline, *message;
		size_t count;
	} paths[MAX_TARGETS];
	size_t npaths, others;
};

/* A note about a call that has no GPU path (GPU208): counted with the
 * calls that stay on the CPU, not with the GPU paths. */
static bool note_without_path(const struct finding *f)
{
	return f->rule->severity == SEV_NOTE && (strcmp(f->rule->category, "no-gpu-path") == 0 ||
						 strcmp(f->rule->category, "not-in-knowledge") == 0);
}

static void headlines(FILE *out, const struct style *s, const struct scan_file *sf)
{
	struct group groups[64];
	size_t ng = 0;
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = &sf->res.items[k];
		size_t g = 0;
		while (g < ng && strcmp(groups[g].library, f->library) != 0)
			g++;
		if (g == ng) {
			if (ng == 64)
				continue;
			memset(&groups[ng], 0, sizeof groups[ng]);
			groups[ng].library = f->library;
			groups[ng].display = f->display;
			ng++;
		}
		struct group *gr = &groups[g];
		if (f->rule->severity != SEV_NOTE || note_without_path(f)) {
			gr->others++;
			continue;
		}
		size_t p = 0;
		while (p < gr->npaths && !(gr->paths[p].target == f->target ||
					   (gr->paths[p].target && f->target &&
					    strcmp(gr->paths[p].target, f->target) == 0)))
			p++;
		if (p == gr->npaths) {
			if (p == MAX_TARGETS)
				continue;
			gr->paths[p].target = f->target;
			gr->paths[p].headline = f->headline;
			gr->paths[p].message = f->message;
			gr->npaths++;
		}
		gr->paths[p].count++;
	}
	for (size_t g = 0; g < ng; g++) {
		const struct group *gr = &groups[g];
		if (gr->npaths == 1 && !gr->paths[0].target && !gr->others) {
			/* Already on a GPU framework: the message names it. */
			fputs("  ", out);
			term_safe_fputs(gr->paths[0].message, out);
			fputc('\n', out);
			continue;
		}
		fprintf(out, "  %s%s%s: ", s->bold, gr->display, s->reset);
		for (size_t p = 0; p < gr->npaths; p++) {
			size_t n = gr->paths[p].count;
			if (p)
				fputs(", ", out);
			if (gr->paths[p].target) {
				fprintf(out, "%zu call%s → %s%s%s", n, n == 1 ? "" : "s", s->green,
					gr->paths[p].target, s->reset);
			} else {
				/* the message names the library itself ("torch: ..."): once is enough */
				const char *m = gr->paths[p].message;
				size_t dl = strlen(gr->display);
				if (strncmp(m, gr->display, dl) == 0 && m[dl] == ':' && m[dl + 1] == ' ')
					m += dl + 2;
				term_safe_fputs(m, out);
			}
		}
		if (gr->others)
			fprintf(out, "%s%zu without a GPU path or flagged below", gr->npaths ? "; " : "", gr->others);
		fputc('\n', out);
		for (size_t p = 0; p < gr->npaths; p++) {
			if (!gr->paths[p].headline)
				continue;
			if (gr->npaths > 1)
				fprintf(out, "      first step (%s): %s\n", gr->paths[p].target, gr->paths[p].headline);
			else
				fprintf(out, "      first step: %s\n", gr->paths[p].headline);
		}
	}
}

/* Hotter first; within a rank, in source order. */
static int hottest_first(const void *a, const void *b)
{
	const struct finding *x = *(const struct finding *const *)a, *y = *(const struct finding *const *)b;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->start_byte < y->start_byte ? -1 : x->start_byte > y->start_byte;
}

static void file_section(FILE *out, const struct style *s, const struct scan_file *sf,
			 const struct report_options *opt)
{
	fputs(s->bold, out);
	term_safe_fputs(sf->path, out);
	fprintf(out, "%s\n", s->reset);
	if (sf->language) {
		fprintf(out, "  %snote%s: the notebook's language is ", s->cyan, s->reset);
		term_safe_fputs(sf->language, out);
		fputs(", not Python: not scanned\n", out);
	}
	if (sf->res.syntax_error_line) {
		if (sf->notebook)
			fprintf(out, "  %snote%s: syntax error in cell %u at line %u; scanned as far as the parser recovered\n",
				s->cyan, s->reset, sf->res.syntax_error_cell, sf->res.syntax_error_line);
		else
			fprintf(out, "  %snote%s: syntax error at line %u; scanned as far as the parser recovered\n",
				s->cyan, s->reset, sf->res.syntax_error_line);
	}
	if (sf->res.budget_line) {
		fprintf(out, "  %snote%s: not fully analysed: the flow model's work budget ran out at ", s->cyan,
			s->reset);
		if (sf->notebook)
			fprintf(out, "cell %u, ", sf->res.budget_cell);
		fprintf(out, "line %u", sf->res.budget_line);
		if (sf->res.budget_func)
			fprintf(out, " in %s()", sf->res.budget_func);
		fputs(", so the GPU rules (GPU601-GPU605) did not look past it\n", out);
	}
	headlines(out, s, sf);
	/* The exceptions that stand out, hottest first, with a code frame. */
	const struct finding **order = xmalloc(sf->res.n * sizeof *order);
	for (size_t k = 0; k < sf->res.n; k++)
		order[k] = &sf->res.items[k];
	if (sf->res.n > 1)
		qsort(order, sf->res.n, sizeof *order, hottest_first);
	size_t quiet = 0, quiet_without_path = 0;
	for (size_t k = 0; k < sf->res.n; k++) {
		const struct finding *f = order[k];
		if (f->rule->severity == SEV_NOTE) {
			quiet++;
			quiet_without_path += note_without_path(f);
			continue;
		}
		fputs("\n  ", out);
		location(out, sf, f);
		fprintf(out, ": %s%s%s %s%s%s [%s]", sev_color(s, f->rule->severity),
			severity_name(f->rule->severity), s->reset, s->bold, f->rule->id, s->reset,
			f->rule->name);
		if (f->rank_reason)
			fprintf(out, " %s(%s)%s", s->dim, f->rank_reason, s->reset);
		fputc('\n', out);
		fputs("    ", out);
		term_safe_fputs(f->message, out);
		fputc('\n', out);
		frame(out, s, f);
		if (f->fix) {
			fprintf(out, "    %sfix:%s ", s->green, s->reset);
			term_safe_fputs(f->fix, out);
			fputc('\n', out);
		}
	}
	if (quiet && opt->verbose) {
		fputc('\n', out);
		for (size_t k = 0; k < sf->res.n; k++) {
			const struct finding *f = order[k];
			if (f->rule->severity != SEV_NOTE)
				continue;
			fputs("  ", out);
			location(out, sf, f);
			fprintf(out, ": %s%s%s %s%s%s ", s->cyan, "note", s->reset, s->bold, f->rule->id,
				s->reset);
			term_safe_fputs(f->message, out);
			if (f->rank_reason)
				fprintf(out, " %s(%s)%s", s->dim, f->rank_reason, s->reset);
			fputc('\n', out);
		}
	} else if (quiet) {
		size_t with_path = quiet - quiet_without_path;
		fprintf(out, "  %s(", s->dim);
		if (with_path)
			fprintf(out, "%zu more site%s with a GPU path", with_path, with_path == 1 ? "" : "s");
		if (quiet_without_path)
			fprintf(out, "%s%zu note%s on a call without one", with_path ? ", " : "",
				quiet_without_path, quiet_without_path == 1 ? "" : "s");
		fprintf(out, ": --verbose lists them)%s\n", s->reset);
	}
	fputc('\n', out);
	free(order);
}

static const struct style *style_of(const struct report *r)
{
	return r->opt.color ? &ansi : &plain;
}

static void text_begin(struct report *r)
{
	(void)r;
}

static void text_file(struct report *r, const struct scan_file *sf)
{
	if (sf->language || sf->res.n || sf->res.syntax_error_line || sf->res.budget_line)
		file_section(r->out, style_of(r), sf, &r->opt);
}

static void text_end(struct report *r, double seconds)
{
	FILE *out = r->out;
	const struct style *s = style_of(r);
	const struct scan_counts *n = &r->counts;
	for (size_t i = 0; i < r->errors.len; i++) {
		const struct path_error *e = r->errors.items[i];
		char *path = term_safe(e->path), *message = term_safe(e->message);
		fprintf(out, "%serror%s: %s: %s\n", s->red, s->reset, path, message);
		free(path);
		free(message);
	}
	fprintf(out, "%sScanned %zu file%s", s->bold, n->files_scanned, n->files_scanned == 1 ? "" : "s");
	if (n->notebooks)
		fprintf(out, " (%zu notebook%s)", n->notebooks, n->notebooks == 1 ? "" : "s");
	fprintf(out, " in %.2f s: %zu finding%s%s", seconds, n->findings, n->findings == 1 ? "" : "s",
		s->reset);
	if (n->findings)
		fprintf(out, " (%zu error, %zu warning, %zu note)", n->by_severity[SEV_ERROR],
			n->by_severity[SEV_WARNING], n->by_severity[SEV_NOTE]);
	if (n->notebooks_skipped)
		fprintf(out, "; %zu notebook%s in another language skipped", n->notebooks_skipped,
			n->notebooks_skipped == 1 ? "" : "s");
	if (n->files_not_fully_analysed)
		fprintf(out, "; %zu file%s not fully analysed (see the notes)", n->files_not_fully_analysed,
			n->files_not_fully_analysed == 1 ? "" : "s");
	if (n->files_with_errors)
		fprintf(out, "; %s%zu path%s could not be scanned%s", s->red, n->files_with_errors,
			n->files_with_errors == 1 ? "" : "s", s->reset);
	fputs(".\n", out);
}

const struct report_format_ops report_text_ops = {text_begin, text_file, NULL, text_end};
