/* util: see util.h. */
#include "util.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag.h"

#ifdef GPUOPT_FAULT_INJECTION
/* GPUOPT_FAULT=OP:N: the Nth call of OP fails. Read once, without
 * allocating (this runs inside xmalloc); counted atomically, as scan's
 * workers allocate at once. */
bool fault_now(const char *op)
{
	static atomic_int state; /* 0 unread, 1 reading, 2 read */
	static char want[16];
	static unsigned long at;
	static atomic_ulong seen;
	int expect = 0;
	if (atomic_compare_exchange_strong(&state, &expect, 1)) {
		const char *e = getenv("GPUOPT_FAULT");
		const char *colon = e ? strchr(e, ':') : NULL;
		if (colon && (size_t)(colon - e) < sizeof want) {
			memcpy(want, e, (size_t)(colon - e));
			at = strtoul(colon + 1, NULL, 10);
		}
		atomic_store(&state, 2);
	}
	while (atomic_load(&state) != 2)
		;
	if (!at || strcmp(op, want) != 0)
		return false;
	return atomic_fetch_add(&seen, 1) + 1 == at;
}
#endif

static void oom(void)
{
	fputs("gpuopt: out of memory\n", stderr);
	exit(EXIT_USAGE);
}

void *xmalloc(size_t n)
{
	void *p = FAULT("alloc") ? NULL : malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = FAULT("alloc") ? NULL : calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = FAULT("alloc") ? NULL : realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct buf b = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return buf_steal(&b);
}

void buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1) {
		if (cap > ((size_t)-1) / 2)
			oom();
		cap *= 2;
	}
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c)
{
	buf_append(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	char probe[1];
	/* GCC 12 with -fsanitize=undefined invents a NULL fmt on this path. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
	int n = vsnprintf(probe, sizeof probe, fmt, ap2);
#pragma GCC diagnostic pop
	va_end(ap2);
	if (n < 0)
		return;
	buf_reserve(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *buf_steal(struct buf *b)
{
	char *s = b->data ? b->data : xstrdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void ptrvec_push(struct ptrvec *v, void *p)
{
	if (v->len == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->items = xrealloc(v->items, v->cap * sizeof *v->items);
	}
	v->items[v->len++] = p;
}

void ptrvec_free(struct ptrvec *v)
{
	free(v->items);
	v->items = NULL;
	v->len = v->cap = 0;
}

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

char *utc_now_text(void)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char text[32];
	strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(text);
}

char *bytes_text(uint64_t b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		return xasprintf("%llu B", (unsigned long long)b);
	if (v == floor(v))
		return xasprintf("%.0f %s", v, units[u]);
	return xasprintf("%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}
