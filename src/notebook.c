/* notebook: see notebook.h. */
#include "notebook.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Cell magics whose body is still Python. */
static const char *const python_cell_magics[] = {
	"time", "timeit", "capture", "prun", "debug", "cache", "load_ext",
};

static bool cell_magic_is_python(const char *line, size_t n)
{
	const char *name = line + 2;
	size_t len = 0;
	while (2 + len < n && name[len] != ' ' && name[len] != '\t' && name[len] != '\r')
		len++;
	for (size_t i = 0; i < sizeof python_cell_magics / sizeof *python_cell_magics; i++)
		if (strlen(python_cell_magics[i]) == len && memcmp(name, python_cell_magics[i], len) == 0)
			return true;
	return false;
}

/* Appends the cell's source (a string or an array of strings) to cell. */
static bool cell_text(json_t *src, struct buf *cell)
{
	if (json_is_string(src)) {
		buf_append(cell, json_string_value(src), json_string_length(src));
		return true;
	}
	if (!json_is_array(src))
		return false;
	size_t i;
	json_t *piece;
	json_array_foreach(src, i, piece) {
		if (!json_is_string(piece))
			return false;
		buf_append(cell, json_string_value(piece), json_string_length(piece));
	}
	return true;
}

struct joiner {
	struct buf text;
	uint32_t *line_cell, *line_in_cell;
	size_t nlines, cap;
};

static void add_line(struct joiner *j, const char *line, size_t n, uint32_t cell, uint32_t in_cell,
		     bool comment)
{
	if (j->nlines == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 256;
		j->line_cell = xrealloc(j->line_cell, j->cap * sizeof *j->line_cell);
		j->line_in_cell = xrealloc(j->line_in_cell, j->cap * sizeof *j->line_in_cell);
	}
	j->line_cell[j->nlines] = cell;
	j->line_in_cell[j->nlines] = in_cell;
	j->nlines++;
	if (comment && n > 0) {
		/* Replace the first non-blank character so columns stay put. */
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t'))
			k++;
		buf_append(&j->text, line, k);
		if (k < n) {
			buf_putc(&j->text, '#');
			buf_append(&j->text, line + k + 1, n - k - 1);
		}
	} else {
		buf_append(&j->text, line, n);
	}
	buf_putc(&j->text, '\n');
}

static void add_cell(struct joiner *j, const char *s, size_t len, uint32_t cell)
{
	bool whole_cell_comment = false;
	uint32_t in_cell = 0;
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(s + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (s + pos)) : len - pos;
		const char *line = s + pos;
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t'))
			k++;
		bool comment = whole_cell_comment;
		if (in_cell == 0 && n >= 2 && line[0] == '%' && line[1] == '%') {
			comment = true;
			whole_cell_comment = !cell_magic_is_python(line, n);
		} else if (k < n && (line[k] == '%' || line[k] == '!')) {
			comment = true;
		} else if (n > 0 && line[n - 1] == '?' && k < n && line[k] != '#') {
			comment = true; /* obj? help syntax */
		}
		add_line(j, line, n, cell, in_cell, comment);
		in_cell++;
		pos += n + 1;
	}
}

bool notebook_to_source(const char *path, const char *json, size_t len,
			struct source *out, char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	json_error_t err;
	json_t *doc = json_loadb(json, len, JSON_ALLOW_NUL, &err);
	if (!doc) {
		*why = xasprintf("notebook is not valid JSON (line %d, column %d: %s)",
				 err.line, err.column, err.text);
		return false;
	}
	json_t *cells = json_object_get(doc, "cells");
	const char *src_key = "source";
	if (!cells) {
		/* nbformat 3: worksheets[0].cells, code in "input" */
		json_t *ws = json_array_get(json_object_get(doc, "worksheets"), 0);
		cells = json_object_get(ws, "cells");
		src_key = "input";
	}
	if (!json_is_object(doc) || !json_is_array(cells)) {
		*why = xstrdup("not a Jupyter notebook: no \"cells\" array at the top level");
		json_decref(doc);
		return false;
	}
	struct joiner j = {0};
	struct buf cell = {0};
	size_t i;
	json_t *c;
	json_array_foreach(cells, i, c) {
		const char *type = json_string_value(json_object_get(c, "cell_type"));
		if (!json_is_object(c) || !type) {
			*why = xasprintf("cell %zu has no \"cell_type\"", i + 1);
			goto fail;
		}
		if (strcmp(type, "code") != 0)
			continue;
		cell.len = 0;
		if (!cell_text(json_object_get(c, src_key), &cell)) {
			*why = xasprintf("cell %zu: \"%s\" is not a string or a list of strings", i + 1, src_key);
			goto fail;
		}
		if (memchr(cell.data ? cell.data : "", '\0', cell.len)) {
			*why = xasprintf("cell %zu: source contains a NUL character", i + 1);
			goto fail;
		}
		add_cell(&j, cell.data ? cell.data : "", cell.len, (uint32_t)(i + 1));
	}
	buf_free(&cell);
	json_decref(doc);
	out->path = xstrdup(path);
	out->len = j.text.len;
	out->text = buf_steal(&j.text);
	out->notebook = true;
	out->line_cell = j.line_cell;
	out->line_in_cell = j.line_in_cell;
	out->nlines = j.nlines;
	return true;
fail:
	buf_free(&cell);
	buf_free(&j.text);
	free(j.line_cell);
	free(j.line_in_cell);
	json_decref(doc);
	return false;
}
