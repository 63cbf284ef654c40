/* diag: see diag.h. */
#include "diag.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void diag_error(const char *fmt, ...)
{
	struct buf msg = {0}, out = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	buf_puts(&out, "gpuopt: ");
	term_safe_append(&out, msg.data ? msg.data : "", msg.len);
	buf_putc(&out, '\n');
	fwrite(out.data, 1, out.len, stderr);
	buf_free(&msg);
	buf_free(&out);
}

/* The length of the valid UTF-8 sequence at s[0..n) that is not a control
 * character, or 0: overlong forms, surrogates and code points past
 * U+10FFFF are not valid; U+0080-U+009F are C1 controls. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
	if (c < 0xC2 || c > 0xF4 || len > n)
		return 0;
	uint32_t cp = c & (0x7F >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp <= 0x9F)
		return 0;
	return len;
}

/* term_safe_append, and with one_line, term_safe_append_value. */
static void safe_append(struct buf *b, const char *s, size_t n, bool one_line)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	buf_append(b, "", 0); /* NUL-terminated even when s is empty */
	buf_reserve(b, n);
	while (p < end) {
		if (one_line && (*p == '\n' || *p == '\t' || *p == '\r' || *p == '\\')) {
			buf_puts(b, *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" : "\\\\");
			p++;
			continue;
		}
		/* the run of plain printable ASCII, newlines and tabs, copied at once */
		const unsigned char *q = p;
		while (q < end && (((*q >= 0x20 && *q < 0x7F) && !(one_line && *q == '\\')) ||
				   (!one_line && (*q == '\n' || *q == '\t'))))
			q++;
		if (q > p) {
			buf_append(b, p, (size_t)(q - p));
			p = q;
			continue;
		}
		size_t len = *p >= 0x80 ? utf8_printable(p, (size_t)(end - p)) : 0;
		if (len) {
			buf_append(b, p, len);
			p += len;
		} else {
			buf_printf(b, "\\x%02x", *p);
			p++;
		}
	}
}

void term_safe_append(struct buf *b, const char *s, size_t n)
{
	safe_append(b, s, n, false);
}

void term_safe_append_value(struct buf *b, const char *s, size_t n)
{
	safe_append(b, s, n, true);
}

char *term_safe(const char *s)
{
	struct buf b = {0};
	term_safe_append(&b, s ? s : "", s ? strlen(s) : 0);
	return buf_steal(&b);
}

char *term_safe_take(char *s)
{
	char *t = term_safe(s);
	free(s);
	return t;
}

void term_safe_fputs(const char *s, FILE *f)
{
	char *t = term_safe(s);
	fputs(t, f);
	free(t);
}

FILE *term_safe_open(struct term_safe_stream *s)
{
	s->text = NULL;
	s->len = 0;
	s->f = open_memstream(&s->text, &s->len);
	if (!s->f) {
		fputs("gpuopt: out of memory\n", stderr);
		exit(EXIT_USAGE);
	}
	return s->f;
}

void term_safe_close(struct term_safe_stream *s, FILE *to)
{
	fclose(s->f);
	struct buf b = {0};
	term_safe_append(&b, s->text ? s->text : "", s->len);
	if (b.len)
		fwrite(b.data, 1, b.len, to);
	buf_free(&b);
	free(s->text);
	s->f = NULL;
	s->text = NULL;
}
