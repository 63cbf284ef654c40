/* source: see source.h. Python's rules for source bytes: UTF-8 unless a
 * coding declaration in the first two lines says otherwise (PEP 263); we
 * accept UTF-8 (with or without BOM) and the latin-1 family, and refuse NUL
 * bytes (binary files) with a message that names the problem. Lines end as
 * Python's reader ends them: at LF, CR LF or a CR alone (old Mac files), in
 * any mix. */
#include "source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fileio.h"
#include "notebook.h"
#include "core/util.h"

size_t utf8_check(const unsigned char *p, size_t len)
{
	size_t i = 0;
	while (i < len) {
		/* ASCII eight bytes at a time: most source is all ASCII */
		uint64_t w;
		while (i + 8 <= len && (memcpy(&w, p + i, 8), (w & 0x8080808080808080ull) == 0))
			i += 8;
		if (i >= len)
			break;
		unsigned char c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t n;
		uint32_t cp;
		if (c >= 0xC2 && c <= 0xDF) { n = 1; cp = c & 0x1F; }
		else if (c >= 0xE0 && c <= 0xEF) { n = 2; cp = c & 0x0F; }
		else if (c >= 0xF0 && c <= 0xF4) { n = 3; cp = c & 0x07; }
		else return i;
		for (size_t k = 1; k <= n; k++) {
			if (i + k >= len || (p[i + k] & 0xC0) != 0x80)
				return i;
			cp = (cp << 6) | (p[i + k] & 0x3F);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
			return i;
		i += n + 1;
	}
	return len;
}

/* The encoding named by a PEP 263 declaration in the first two lines, or
 * NULL. Writes at most cap-1 characters. */
static const char *coding_cookie(const char *p, size_t len, char *out, size_t cap)
{
	size_t line_start = 0;
	for (int line = 0; line < 2 && line_start < len; line++) {
		const char *ls = p + line_start;
		const char *nl = memchr(ls, '\n', len - line_start);
		size_t ll = nl ? (size_t)(nl - ls) : len - line_start;
		const char *hash = memchr(ls, '#', ll);
		if (hash) {
			for (const char *q = hash; q + 6 < ls + ll; q++) {
				if (strncmp(q, "coding", 6) == 0 && (q[6] == ':' || q[6] == '=')) {
					const char *v = q + 7;
					while (v < ls + ll && (*v == ' ' || *v == '\t'))
						v++;
					size_t n = 0;
					while (v + n < ls + ll && n + 1 < cap &&
					       (isalnum((unsigned char)v[n]) || v[n] == '-' || v[n] == '_' || v[n] == '.')) {
						out[n] = (char)tolower((unsigned char)v[n]);
						n++;
					}
					out[n] = '\0';
					return n ? out : NULL;
				}
			}
		}
		if (!nl)
			break;
		line_start += ll + 1;
	}
	return NULL;
}

static bool is_latin1_name(const char *e)
{
	static const char *const names[] = {"latin-1", "latin1", "iso-8859-1", "iso8859-1",
					    "iso-8859-15", "iso8859-15", "cp1252", "windows-1252",
					    "l1", "iso-latin-1", "latin_1", "iso_8859_1"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(e, names[i]) == 0)
			return true;
	return false;
}

void source_newlines(char *text, size_t len)
{
	for (char *p = text, *end = text + len; (p = memchr(p, '\r', (size_t)(end - p))) != NULL; p++)
		if (p + 1 == end || p[1] != '\n')
			*p = '\n';
}

bool source_from_python(const char *path, const char *bytes, size_t len,
			struct source *out, char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	const char *nul = memchr(bytes, '\0', len);
	if (nul) {
		*why = xasprintf("binary file (NUL byte at offset %zu); not Python source",
				 (size_t)(nul - bytes));
		return false;
	}
	if (len >= 3 && memcmp(bytes, "\xEF\xBB\xBF", 3) == 0) {
		bytes += 3;
		len -= 3;
	}
	/* the lines as Python reads them, before the coding declaration (in
	 * the first two) is looked for and bad bytes are placed on a line */
	struct buf text = {0};
	buf_append(&text, bytes, len);
	source_newlines(text.data, len);
	const char *t = text.data;
	size_t bad = utf8_check((const unsigned char *)t, len);
	if (bad != len) {
		char enc[32];
		if (!coding_cookie(t, len, enc, sizeof enc) || !is_latin1_name(enc)) {
			size_t line = 1;
			for (size_t i = 0; i < bad; i++)
				line += t[i] == '\n';
			*why = xasprintf("invalid UTF-8 at byte %zu (line %zu), and no latin-1 coding declaration", bad, line);
			buf_free(&text);
			return false;
		}
		/* latin-1 (cp1252 read as latin-1: close enough for names and calls) */
		struct buf latin = text;
		memset(&text, 0, sizeof text);
		buf_reserve(&text, len * 2);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)latin.data[i];
			if (c < 0x80) {
				buf_putc(&text, (char)c);
			} else {
				buf_putc(&text, (char)(0xC0 | (c >> 6)));
				buf_putc(&text, (char)(0x80 | (c & 0x3F)));
			}
		}
		buf_free(&latin);
	}
	out->path = xstrdup(path);
	out->len = text.len;
	out->text = buf_steal(&text);
	return true;
}

bool source_load(const char *path, struct source *out, char **why)
{
	memset(out, 0, sizeof *out);
	struct buf raw = {0};
	bool nb = str_ends_with(path, ".ipynb");
	if (!read_file(path, nb ? NOTEBOOK_SIZE_LIMIT : SOURCE_SIZE_LIMIT, &raw, why)) {
		buf_free(&raw);
		return false;
	}
	bool ok;
	if (nb)
		ok = notebook_to_source(path, raw.data ? raw.data : "", raw.len, out, why);
	else
		ok = source_from_python(path, raw.data ? raw.data : "", raw.len, out, why);
	buf_free(&raw);
	return ok;
}

void source_free(struct source *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->language);
	free(s->text);
	free(s->line_cell);
	free(s->line_in_cell);
	free(s->line_file);
	free(s->cont_blocks);
	memset(s, 0, sizeof *s);
}

/* Continuation bytes (10xxxxxx) in text[0..pos). */
static size_t cont_before(const struct source *s, size_t pos)
{
	const unsigned char *t = (const unsigned char *)s->text;
	size_t b = pos / SOURCE_COL_BLOCK, n = s->cont_blocks[b];
	for (size_t i = b * SOURCE_COL_BLOCK; i < pos; i++)
		n += (t[i] & 0xC0) == 0x80;
	return n;
}

uint32_t source_column(const struct source *s, size_t line_start, uint32_t byte_col)
{
	if (!s->cont_ready) { /* once per source: the index is the source's own */
		struct source *m = (struct source *)s;
		const unsigned char *t = (const unsigned char *)s->text;
		size_t nb = s->len / SOURCE_COL_BLOCK + 1, total = 0;
		uint32_t *blocks = xmalloc((nb + 1) * sizeof *blocks);
		blocks[0] = 0;
		for (size_t b = 0; b < nb; b++) {
			size_t end = (b + 1) * SOURCE_COL_BLOCK < s->len ? (b + 1) * SOURCE_COL_BLOCK : s->len;
			for (size_t i = b * SOURCE_COL_BLOCK; i < end; i++)
				total += (t[i] & 0xC0) == 0x80;
			blocks[b + 1] = (uint32_t)total;
		}
		if (!total) { /* ASCII: a column is a byte offset */
			free(blocks);
			blocks = NULL;
		}
		m->cont_blocks = blocks;
		m->cont_ready = true;
	}
	size_t start = line_start < s->len ? line_start : s->len;
	size_t end = line_start + byte_col < s->len ? line_start + byte_col : s->len;
	size_t bytes = end - start;
	if (s->cont_blocks)
		bytes -= cont_before(s, end) - cont_before(s, start);
	return (uint32_t)bytes + 1;
}
