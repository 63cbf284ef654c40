/* notebook: see notebook.h. */
#include "notebook.h"

#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

/* Cell magics whose body is still Python. */
static const char *const python_cell_magics[] = {
	"time", "timeit", "capture", "prun", "debug", "cache", "load_ext",
};

/* `%%writefile [-a] NAME.py`: the cell is the program the notebook runs
 * next (`!python NAME.py`), so it is scanned as Python. */
static bool writes_python_file(const char *args, size_t n)
{
	while (n > 0 && (args[n - 1] == ' ' || args[n - 1] == '\t' || args[n - 1] == '\r'))
		n--;
	return n >= 3 && memcmp(args + n - 3, ".py", 3) == 0;
}

static bool cell_magic_is_python(const char *line, size_t n)
{
	const char *name = line + 2;
	size_t len = 0;
	while (2 + len < n && name[len] != ' ' && name[len] != '\t' && name[len] != '\r')
		len++;
	for (size_t i = 0; i < sizeof python_cell_magics / sizeof *python_cell_magics; i++)
		if (strlen(python_cell_magics[i]) == len && memcmp(name, python_cell_magics[i], len) == 0)
			return true;
	if (len == 9 && memcmp(name, "writefile", 9) == 0)
		return writes_python_file(name + len, n - 2 - len);
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

/* ---- where each cell line is in the .ipynb file ----
 * jansson keeps no positions, so the notebook's text is walked once more
 * (it is valid JSON by then) to the cells' "source" strings: a string
 * holds no raw newline, so each is on one line of the file, and each "\n"
 * (or a "\r" not followed by one) inside it ends one line of the cell. */

struct cell_lines {
	uint32_t *line; /* per cell line: the file line it starts on */
	size_t n, cap;
};

struct jscan {
	const char *p, *end;
	uint32_t line;
	int depth;
};

static void js_ws(struct jscan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) {
		s->line += *s->p == '\n';
		s->p++;
	}
}

static void lines_push(struct cell_lines *cl, size_t at, uint32_t line)
{
	while (cl->n <= at) {
		if (cl->n == cl->cap) {
			cl->cap = cl->cap ? 2 * cl->cap : 16;
			cl->line = xrealloc(cl->line, cl->cap * sizeof *cl->line);
		}
		cl->line[cl->n++] = 0;
	}
	if (!cl->line[at])
		cl->line[at] = line;
}

/* Past a string at s->p ('"'); with cl, its cell lines are recorded from
 * *cur on (and *cur advanced past each "\n"). */
static bool js_string(struct jscan *s, struct cell_lines *cl, size_t *cur)
{
	if (s->p >= s->end || *s->p != '"')
		return false;
	s->p++;
	if (cl)
		lines_push(cl, *cur, s->line);
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' && s->p + 1 < s->end) {
			/* "\n" ends a line of the cell, and so does "\r" not
			 * followed by "\n" (source_newlines) */
			bool nl = s->p[1] == 'n' ||
				  (s->p[1] == 'r' && !(s->end - s->p >= 4 && s->p[2] == '\\' && s->p[3] == 'n'));
			s->p += 2;
			if (nl && cl) {
				++*cur;
				if (s->p < s->end && *s->p != '"')
					lines_push(cl, *cur, s->line); /* the next line starts here too */
			}
			continue;
		}
		s->p++;
	}
	if (s->p >= s->end)
		return false;
	s->p++;
	return true;
}

static bool js_value(struct jscan *s);

static bool js_members(struct jscan *s, char open, char close, bool keyed)
{
	if (s->p >= s->end || *s->p != open || ++s->depth > 200)
		return false;
	s->p++;
	js_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		s->depth--;
		return true;
	}
	for (;;) {
		js_ws(s);
		if (keyed) {
			if (!js_string(s, NULL, NULL))
				return false;
			js_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return false;
			s->p++;
			js_ws(s);
		}
		if (!js_value(s))
			return false;
		js_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == close) {
			s->p++;
			s->depth--;
			return true;
		}
		return false;
	}
}

static bool js_value(struct jscan *s)
{
	if (s->p >= s->end)
		return false;
	if (*s->p == '"')
		return js_string(s, NULL, NULL);
	if (*s->p == '{')
		return js_members(s, '{', '}', true);
	if (*s->p == '[')
		return js_members(s, '[', ']', false);
	while (s->p < s->end && !strchr(",]} \t\r\n", *s->p))
		s->p++;
	return true;
}

/* At a key (s->p at '"'): true and past the colon when it is `key`. */
static bool js_key(struct jscan *s, const char *key, bool *match)
{
	const char *k = s->p + 1;
	if (!js_string(s, NULL, NULL))
		return false;
	size_t n = strlen(key);
	*match = (size_t)(s->p - 1 - k) == n && memcmp(k, key, n) == 0;
	js_ws(s);
	if (s->p >= s->end || *s->p != ':')
		return false;
	s->p++;
	js_ws(s);
	return true;
}

/* The cell object at s->p: its src_key's lines into cl. */
static bool js_cell(struct jscan *s, const char *src_key, struct cell_lines *cl)
{
	if (s->p >= s->end || *s->p != '{')
		return js_value(s);
	s->p++;
	for (;;) {
		js_ws(s);
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			return true;
		}
		bool is_src;
		if (!js_key(s, src_key, &is_src))
			return false;
		size_t cur = 0;
		if (is_src && s->p < s->end && *s->p == '"') {
			if (!js_string(s, cl, &cur))
				return false;
		} else if (is_src && s->p < s->end && *s->p == '[') {
			s->p++;
			for (;;) {
				js_ws(s);
				if (s->p < s->end && *s->p == ']') {
					s->p++;
					break;
				}
				if (!(s->p < s->end && *s->p == '"' ? js_string(s, cl, &cur) : js_value(s)))
					return false;
				js_ws(s);
				if (s->p < s->end && *s->p == ',')
					s->p++;
			}
		} else if (!js_value(s)) {
			return false;
		}
		js_ws(s);
		if (s->p < s->end && *s->p == ',')
			s->p++;
	}
}

/* The array of cells at s->p: one cell_lines per cell, in order. */
static bool js_cells(struct jscan *s, const char *src_key, struct cell_lines **out, size_t *n)
{
	if (s->p >= s->end || *s->p != '[')
		return false;
	s->p++;
	size_t cap = 0;
	for (;;) {
		js_ws(s);
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			return true;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*out = xrealloc(*out, cap * sizeof **out);
		}
		memset(&(*out)[*n], 0, sizeof **out);
		if (!js_cell(s, src_key, &(*out)[(*n)++]))
			return false;
		js_ws(s);
		if (s->p < s->end && *s->p == ',')
			s->p++;
	}
}

/* Finds the cells array (top-level "cells", or nbformat 3's
 * worksheets[0].cells) and maps its cells' lines. Best effort: on anything
 * unexpected the map is left short (lines then read 0: unknown). */
static void map_file_lines(const char *json, size_t len, const char *src_key, struct cell_lines **out,
			   size_t *n)
{
	struct jscan s = {json, json + len, 1, 0};
	js_ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return;
	s.p++;
	for (;;) {
		js_ws(&s);
		if (s.p >= s.end || *s.p == '}')
			return;
		bool cells, ws = false;
		const char *key = s.p;
		if (!js_key(&s, "cells", &cells))
			return;
		if (!cells) {
			s.p = key;
			if (!js_key(&s, "worksheets", &ws))
				return;
		}
		if (cells) {
			js_cells(&s, src_key, out, n);
			return;
		}
		if (ws && s.p < s.end && *s.p == '[') {
			s.p++;
			js_ws(&s);
			if (s.p < s.end && *s.p == '{') {
				s.p++;
				for (;;) {
					js_ws(&s);
					bool c2;
					if (s.p >= s.end || *s.p == '}' || !js_key(&s, "cells", &c2))
						return;
					if (c2) {
						js_cells(&s, src_key, out, n);
						return;
					}
					if (!js_value(&s))
						return;
					js_ws(&s);
					if (s.p < s.end && *s.p == ',')
						s.p++;
				}
			}
			return;
		}
		if (!js_value(&s))
			return;
		js_ws(&s);
		if (s.p < s.end && *s.p == ',')
			s.p++;
	}
}

struct joiner {
	struct buf text;
	uint32_t *line_cell, *line_in_cell, *line_file;
	size_t nlines, cap;
	const struct cell_lines *file; /* the cell being added: its lines in the file */
};

static void add_line(struct joiner *j, const char *line, size_t n, uint32_t cell, uint32_t in_cell)
{
	if (j->nlines == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 256;
		j->line_cell = xrealloc(j->line_cell, j->cap * sizeof *j->line_cell);
		j->line_in_cell = xrealloc(j->line_in_cell, j->cap * sizeof *j->line_in_cell);
		j->line_file = xrealloc(j->line_file, j->cap * sizeof *j->line_file);
	}
	j->line_cell[j->nlines] = cell;
	j->line_in_cell[j->nlines] = in_cell;
	j->line_file[j->nlines] = j->file && in_cell < j->file->n ? j->file->line[in_cell] : 0;
	j->nlines++;
	buf_append(&j->text, line, n);
	buf_putc(&j->text, '\n');
}

static bool is_name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '.';
}

/* `%time stmt`, `%timeit -n 10 stmt`, `%prun stmt`: where stmt starts, or n. */
static size_t timed_statement(const char *l, size_t k, size_t n)
{
	static const char *const magics[] = {"time", "timeit", "prun"};
	size_t e = k + 1;
	while (e < n && is_name_char(l[e]))
		e++;
	bool timed = false;
	for (size_t i = 0; i < sizeof magics / sizeof *magics; i++)
		timed |= e - k - 1 == strlen(magics[i]) && memcmp(l + k + 1, magics[i], e - k - 1) == 0;
	if (!timed)
		return n;
	for (;;) { /* options: -n 10, -r3, -q, -o ... */
		while (e < n && (l[e] == ' ' || l[e] == '\t'))
			e++;
		if (e >= n || l[e] != '-')
			return e;
		bool takes_value = e + 2 < n && strchr("nrpsTDl", l[e + 1]) && (l[e + 2] == ' ' || l[e + 2] == '\t');
		while (e < n && l[e] != ' ' && l[e] != '\t')
			e++;
		if (takes_value) {
			while (e < n && (l[e] == ' ' || l[e] == '\t'))
				e++;
			while (e < n && l[e] != ' ' && l[e] != '\t')
				e++;
		}
	}
}

/* Rewrites one line of IPython syntax in place into Python of the same
 * length, so every column stays where the user sees it:
 *   %magic args         -> #magic args
 *   !shell              -> #shell
 *   %time stmt          -> _    ;stmt      (the statement is still scanned)
 *   x = !cmd / x = %mag -> x = _#cmd       (a value, then a comment)
 *   obj? / obj??        -> #bj?            (help) */
static void ipython_line(char *l, size_t n)
{
	size_t k = 0;
	while (k < n && (l[k] == ' ' || l[k] == '\t'))
		k++;
	if (k >= n)
		return;
	if (l[k] == '%') {
		size_t st = timed_statement(l, k, n);
		if (st < n && st - k >= 2) {
			l[k] = '_';
			memset(l + k + 1, ' ', st - k - 2);
			l[st - 1] = ';';
		} else {
			l[k] = '#';
		}
		return;
	}
	if (l[k] == '!') {
		l[k] = '#';
		return;
	}
	/* name = !cmd, a, b = %magic */
	size_t e = k;
	while (e < n && (is_name_char(l[e]) || l[e] == ',' || l[e] == ' '))
		e++;
	if (e > k && e + 1 < n && l[e] == '=' && l[e + 1] != '=') {
		size_t v = e + 1;
		while (v < n && (l[v] == ' ' || l[v] == '\t'))
			v++;
		if (v < n && (l[v] == '!' || l[v] == '%')) {
			l[v] = '_';
			if (v + 1 < n)
				l[v + 1] = '#';
			return;
		}
	}
	/* help: the whole line is `name?`, `name??` or `?name` */
	size_t q = k;
	if (l[q] == '?')
		while (q < n && l[q] == '?')
			q++;
	size_t w = q;
	while (w < n && is_name_char(l[w]))
		w++;
	size_t t = w;
	while (t < n && l[t] == '?')
		t++;
	while (t < n && (l[t] == ' ' || l[t] == '\t' || l[t] == '\r'))
		t++;
	if (w > q && t == n && (q > k || (w < n && l[w] == '?')))
		l[k] = '#';
}

static void add_cell(struct joiner *j, const char *s, size_t len, uint32_t cell)
{
	bool whole_cell_comment = false;
	uint32_t in_cell = 0;
	size_t pos = 0;
	struct buf line = {0};
	while (pos < len) {
		const char *nl = memchr(s + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (s + pos)) : len - pos;
		line.len = 0;
		buf_append(&line, s + pos, n);
		char *l = line.data;
		if (in_cell == 0 && n >= 2 && l[0] == '%' && l[1] == '%') {
			whole_cell_comment = !cell_magic_is_python(l, n);
			l[0] = '#';
		} else if (whole_cell_comment) {
			size_t k = 0;
			while (k < n && (l[k] == ' ' || l[k] == '\t'))
				k++;
			if (k < n)
				l[k] = '#';
		} else {
			ipython_line(l, n);
		}
		add_line(j, l, n, cell, in_cell);
		in_cell++;
		pos += n + 1;
	}
	buf_free(&line);
}

/* The language the notebook's kernel runs, when it is not Python (owned),
 * else NULL: kernelspec.language, else language_info.name (nbformat 3:
 * the top-level "language"). Python's dialects (python3, ipython) are
 * Python. */
static char *other_language(json_t *doc)
{
	json_t *meta = json_object_get(doc, "metadata");
	const char *lang = json_string_value(json_object_get(json_object_get(meta, "kernelspec"), "language"));
	if (!lang || !*lang)
		lang = json_string_value(json_object_get(json_object_get(meta, "language_info"), "name"));
	if (!lang || !*lang)
		lang = json_string_value(json_object_get(meta, "language"));
	if (!lang || !*lang || strncasecmp(lang, "python", 6) == 0 || strncasecmp(lang, "ipython", 7) == 0)
		return NULL;
	return xstrdup(lang);
}

bool notebook_to_source(const char *path, const char *json, size_t len,
			struct source *out, char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	/* a byte order mark, as some editors save UTF-8; JSON forbids it, Jupyter reads it */
	if (len >= 3 && memcmp(json, "\xef\xbb\xbf", 3) == 0) {
		json += 3;
		len -= 3;
	}
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
	char *language = other_language(doc);
	if (language) {
		json_decref(doc);
		out->path = xstrdup(path);
		out->text = xstrdup("");
		out->notebook = true;
		out->language = language;
		return true;
	}
	struct joiner j = {0};
	struct buf cell = {0};
	struct cell_lines *fl = NULL;
	size_t nfl = 0;
	map_file_lines(json, len, src_key, &fl, &nfl);
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
		j.file = i < nfl ? &fl[i] : NULL;
		if (cell.data)
			source_newlines(cell.data, cell.len);
		add_cell(&j, cell.data ? cell.data : "", cell.len, (uint32_t)(i + 1));
	}
	for (size_t k = 0; k < nfl; k++)
		free(fl[k].line);
	free(fl);
	buf_free(&cell);
	json_decref(doc);
	out->path = xstrdup(path);
	out->len = j.text.len;
	out->text = buf_steal(&j.text);
	out->notebook = true;
	out->line_cell = j.line_cell;
	out->line_in_cell = j.line_in_cell;
	out->line_file = j.line_file;
	out->nlines = j.nlines;
	return true;
fail:
	for (size_t k = 0; k < nfl; k++)
		free(fl[k].line);
	free(fl);
	buf_free(&cell);
	buf_free(&j.text);
	free(j.line_cell);
	free(j.line_in_cell);
	free(j.line_file);
	json_decref(doc);
	return false;
}
