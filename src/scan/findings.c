/* findings: see findings.h. */
#include "findings.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void finding_position(const struct source *src, struct pt_point pt, uint32_t byte, uint32_t *line,
		      uint32_t *col, uint32_t *cell)
{
	*col = source_column(src, byte - pt.col, pt.col);
	if (src->notebook && pt.row < src->nlines) {
		*cell = src->line_cell[pt.row];
		*line = src->line_in_cell[pt.row] + 1;
	} else {
		*cell = 0;
		*line = pt.row + 1;
	}
}

struct finding *finding_add(struct scan_result *r, const struct source *src, PNode at,
			    const struct rule *rule, const char *library, const char *display,
			    const char *target, const char *symbol, bool keep_text)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->items = xrealloc(r->items, r->cap * sizeof *r->items);
	}
	struct finding *f = &r->items[r->n++];
	memset(f, 0, sizeof *f);
	f->start_byte = pn_start_byte(at);
	f->end_byte = pn_end_byte(at);
	uint32_t end_cell;
	finding_position(src, pn_start_point(at), f->start_byte, &f->line, &f->col, &f->cell);
	finding_position(src, pn_end_point(at), f->end_byte, &f->end_line, &f->end_col, &end_cell);
	if (end_cell != f->cell) { /* cannot span cells; clamp to the start */
		f->end_line = f->line;
		f->end_col = f->col;
	}
	f->rule = rule;
	f->library = library;
	f->display = display;
	f->target = target;
	f->symbol = xstrdup(symbol);
	f->func = -1;
	if (!keep_text)
		return f;
	/* The whole source line, for code frames (capped on a character boundary). */
	uint32_t ls = f->start_byte - pn_start_point(at).col;
	const char *line = src->text + ls;
	const char *nl = memchr(line, '\n', src->len - ls);
	size_t n = nl ? (size_t)(nl - line) : src->len - ls;
	if (n > 400) {
		n = 400;
		while (n > 0 && ((unsigned char)line[n] & 0xC0) == 0x80)
			n--;
	}
	while (n > 0 && line[n - 1] == '\r')
		n--;
	f->line_text = xstrndup(line, n);
	return f;
}

void finding_end(const struct source *src, struct finding *f, PNode end)
{
	uint32_t cell;
	finding_position(src, pn_end_point(end), pn_end_byte(end), &f->end_line, &f->end_col, &cell);
	f->end_byte = pn_end_byte(end);
	if (cell != f->cell) {
		f->end_line = f->line;
		f->end_col = f->col;
	}
}

char *finding_snippet(const char *s, size_t len)
{
	char *r;
	if (len > 48) {
		len = 45;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
		char *t = xstrndup(s, len);
		r = xasprintf("%s...", t);
		free(t);
	} else {
		r = xstrndup(s, len);
	}
	for (char *p = r; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return r;
}
