/* caplog: see caplog.h. */
#include "caplog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

void caplog_init(struct caplog *c, int fd, uint64_t limit,
		 void (*on_line)(void *ctx, const char *line, size_t len), void *line_ctx)
{
	memset(c, 0, sizeof *c);
	c->fd = fd;
	c->limit = limit;
	c->on_line = on_line;
	c->line_ctx = line_ctx;
	c->head_nl = true;
}

static void keep(struct caplog *c, const char *p, size_t n)
{
	if (!n)
		return;
	if (c->fd < 0)
		buf_append(&c->mem, p, n);
	else if (!c->err && !write_all(c->fd, p, n))
		c->err = errno ? errno : EIO;
}

static void emit_line(struct caplog *c)
{
	buf_putc(&c->line, '\0');
	c->on_line(c->line_ctx, c->line.data, c->line.len - 1);
	c->line.len = 0;
}

static void lines(struct caplog *c, const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n, room = CAPLOG_LINE_MAX - c->line.len;
		if (k > room)
			k = room;
		buf_append(&c->line, p, k);
		p += k;
		n -= k;
		bool at_nl = n && *p == '\n';
		if (at_nl || c->line.len == CAPLOG_LINE_MAX) {
			emit_line(c);
			if (at_nl) {
				p++;
				n--;
			}
		}
	}
}

void caplog_write(struct caplog *c, const void *data, size_t n)
{
	const char *p = data;
	if (c->finished || !n)
		return;
	if (c->on_line)
		lines(c, p, n);
	c->total += n;
	uint64_t head_max = c->limit / 2;
	if (c->head < head_max) {
		size_t k = head_max - c->head < n ? (size_t)(head_max - c->head) : n;
		keep(c, p, k);
		c->head += k;
		c->head_nl = p[k - 1] == '\n';
		p += k;
		n -= k;
	}
	if (!n)
		return;
	if (!c->ring) {
		c->ring_cap = (size_t)(c->limit - head_max);
		if (!c->ring_cap)
			return; /* a limit of 0 or 1 byte: nothing kept after the head */
		c->ring = xmalloc(c->ring_cap);
	}
	if (n >= c->ring_cap) { /* only its end stays */
		memcpy(c->ring, p + n - c->ring_cap, c->ring_cap);
		c->ring_len = c->ring_cap;
		c->ring_pos = 0;
		return;
	}
	/* append at the end of what is held, overwriting the oldest */
	size_t end = (c->ring_pos + c->ring_len) % c->ring_cap;
	size_t first = c->ring_cap - end < n ? c->ring_cap - end : n;
	memcpy(c->ring + end, p, first);
	memcpy(c->ring, p + first, n - first);
	if (c->ring_len + n > c->ring_cap) {
		c->ring_pos = (c->ring_pos + c->ring_len + n - c->ring_cap) % c->ring_cap;
		c->ring_len = c->ring_cap;
	} else {
		c->ring_len += n;
	}
}

uint64_t caplog_dropped(const struct caplog *c)
{
	return c->total - c->head - c->ring_len;
}

bool caplog_finish(struct caplog *c)
{
	if (c->finished)
		return !c->err;
	c->finished = true;
	if (c->on_line && c->line.len)
		emit_line(c);
	uint64_t dropped = caplog_dropped(c);
	if (dropped) {
		char note[256];
		int k = snprintf(note, sizeof note,
				 "%s[gpuopt: %llu bytes of output dropped here: only the first %llu and the last "
				 "%llu bytes are kept]\n",
				 c->head_nl ? "" : "\n", (unsigned long long)dropped, (unsigned long long)c->head,
				 (unsigned long long)c->ring_len);
		keep(c, note, (size_t)k);
	}
	if (c->ring_len) {
		size_t first = c->ring_cap - c->ring_pos < c->ring_len ? c->ring_cap - c->ring_pos : c->ring_len;
		keep(c, c->ring + c->ring_pos, first);
		keep(c, c->ring, c->ring_len - first);
	}
	free(c->ring);
	c->ring = NULL;
	c->ring_cap = 0; /* ring_len stays: caplog_dropped is still asked */
	return !c->err;
}

const char *caplog_text(const struct caplog *c)
{
	return c->mem.data ? c->mem.data : "";
}

void caplog_free(struct caplog *c)
{
	if (!c)
		return;
	free(c->ring);
	buf_free(&c->mem);
	buf_free(&c->line);
	c->ring = NULL;
	c->ring_cap = c->ring_len = c->ring_pos = 0;
}
