/* csvtab: see csvtab.h. One pass over the text: a read position p and a
 * write position w <= p, so unescaped fields are written back in place. */
#include "csvtab.h"

#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/util.h"

/* Tables larger than this are refused (they are read whole). */
#define CSV_LIMIT ((size_t)4 << 30)

void csvtab_free(struct csvtab *t)
{
	free(t->text);
	free(t->cells);
	free(t->lines);
	free(t->by_name);
	memset(t, 0, sizeof *t);
}

struct growing {
	char **cells;
	size_t n, cap;
	size_t *lines;
	size_t nrows, rcap;
};

/* Frees everything (g may be NULL) and hands msg back as the error. */
static bool fail(struct csvtab *t, struct growing *g, char **why, char *msg)
{
	if (g) {
		free(g->cells);
		free(g->lines);
	}
	csvtab_free(t);
	*why = msg;
	return false;
}

static void push_cell(struct growing *g, char *cell)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 256;
		g->cells = xrealloc(g->cells, g->cap * sizeof *g->cells);
	}
	g->cells[g->n++] = cell;
}

static void push_row(struct growing *g, size_t line)
{
	if (g->nrows == g->rcap) {
		g->rcap = g->rcap ? g->rcap * 2 : 64;
		g->lines = xrealloc(g->lines, g->rcap * sizeof *g->lines);
	}
	g->lines[g->nrows++] = line;
}

static int name_cmp(const void *a, const void *b, void *cells)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(((char **)cells)[x], ((char **)cells)[y]);
	return c ? c : x < y ? -1 : x > y;
}

bool csvtab_parse(char *text, size_t len, char sep, struct csvtab *t, char **why)
{
	memset(t, 0, sizeof *t);
	t->text = text;
	t->sep = sep;
	*why = NULL;
	text[len] = '\0';
	if (memchr(text, '\0', len))
		return fail(t, NULL, why, xstrdup("it contains a NUL byte: not a text table"));
	size_t p = 0, w = 0, line = 1;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p = w = 3;
	struct growing g = {0};
	size_t fields = 0;
	while (p < len) {
		/* At the start of a row: skip blank lines. */
		if (text[p] == '\n' || text[p] == '\r') {
			p += text[p] == '\r' && p + 1 < len && text[p + 1] == '\n' ? 2 : 1;
			w = p;
			line++;
			continue;
		}
		size_t row_line = line;
		fields = 0;
		for (;;) {
			char *field = text + w;
			if (p < len && text[p] == '"') {
				size_t qline = line;
				p++;
				for (;;) {
					if (p >= len)
						return fail(t, &g, why, xasprintf("line %zu: a quoted field is not closed "
									      "before the end of the file", qline));
					if (text[p] == '"') {
						if (p + 1 < len && text[p + 1] == '"') {
							text[w++] = '"';
							p += 2;
							continue;
						}
						p++;
						break;
					}
					if (text[p] == '\n')
						line++;
					text[w++] = text[p++];
				}
				if (p < len && text[p] != sep && text[p] != '\n' && text[p] != '\r')
					return fail(t, &g, why, xasprintf("line %zu: unexpected text after a "
									  "closing quote", line));
			} else {
				while (p < len && text[p] != sep && text[p] != '\n' && text[p] != '\r')
					text[w++] = text[p++];
			}
			char end = p < len ? text[p] : '\n';
			text[w] = '\0';
			push_cell(&g, field);
			fields++;
			if (end == sep) {
				p++;
				w = p;
				continue;
			}
			/* text[p] may be the NUL just written: test the saved `end` */
			if (p < len)
				p += end == '\r' && p + 1 < len && text[p + 1] == '\n' ? 2 : 1;
			w = p;
			line++;
			break;
		}
		push_row(&g, row_line);
		size_t ncols = g.nrows == 1 ? fields : t->ncols;
		if (g.nrows == 1)
			t->ncols = fields;
		if (fields != ncols) {
			size_t row = g.nrows - 2; /* data rows count from 0, as in the reports */
			return fail(t, &g, why, xasprintf("ragged rows: row %zu (line %zu) has %zu field%s, the header "
						      "has %zu", row, row_line, fields, fields == 1 ? "" : "s",
						      ncols));
		}
	}
	if (g.nrows == 0)
		return fail(t, &g, why, xstrdup("empty file: no header row"));
	t->cells = g.cells;
	t->lines = g.lines;
	t->nrows = g.nrows - 1;
	/* the names sorted (ties by position): a repeated name is a neighbour */
	t->by_name = xmalloc((t->ncols ? t->ncols : 1) * sizeof *t->by_name);
	for (size_t i = 0; i < t->ncols; i++)
		t->by_name[i] = i;
	if (t->ncols > 1)
		qsort_r(t->by_name, t->ncols, sizeof *t->by_name, name_cmp, t->cells);
	for (size_t i = 1; i < t->ncols; i++)
		if (strcmp(t->cells[t->by_name[i - 1]], t->cells[t->by_name[i]]) == 0)
			return fail(t, NULL, why, xasprintf("the header names column '%s' twice",
							    t->cells[t->by_name[i]]));
	return true;
}

char csvtab_sep_for(const char *path)
{
	return str_ends_with(path, ".tsv") || str_ends_with(path, ".tab") || str_ends_with(path, ".TSV")
		       ? '\t'
		       : ',';
}

bool csvtab_read(const char *path, struct csvtab *t, char **why)
{
	struct buf b = {0};
	memset(t, 0, sizeof *t);
	if (!read_file(path, CSV_LIMIT, &b, why)) {
		buf_free(&b);
		return false;
	}
	buf_reserve(&b, 1);
	size_t len = b.len;
	return csvtab_parse(buf_steal(&b), len, csvtab_sep_for(path), t, why);
}

long csvtab_column(const struct csvtab *t, const char *name)
{
	size_t lo = 0, hi = t->ncols;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->cells[t->by_name[mid]], name);
		if (c == 0)
			return (long)t->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}
