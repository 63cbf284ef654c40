/* tracetext: a saved trace's text to jansson, its timelines lifted out on
 * the way (see tracetext.h). */
#include "tracetext.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

bool trace_event_from_row(const uint64_t v[TRACE_EVENT_FIELDS], struct trace_event *e)
{
	for (size_t k = 0; k < TRACE_EVENT_FIELDS; k++)
		if ((k != 7 && k != 8 && k != 9 && v[k] > UINT32_MAX) || (k < 4 && v[k] > 255))
			return false;
	memset(e, 0, sizeof *e);
	e->type = (uint8_t)v[0];
	e->kind = (uint8_t)v[1];
	e->hostkind = (uint8_t)v[2];
	e->flags = (uint8_t)v[3];
	e->device = (uint32_t)v[4];
	e->stream = (uint32_t)v[5];
	e->correlation = (uint32_t)v[6];
	e->start = v[7];
	e->end = v[8];
	e->bytes = v[9];
	e->name = (uint32_t)v[10];
	e->site = (uint32_t)v[11];
	e->tid = (uint32_t)v[12];
	for (int k = 0; k < 3; k++) {
		e->grid[k] = (uint32_t)v[13 + k];
		e->block[k] = (uint32_t)v[16 + k];
	}
	return true;
}

/* The keys the scanner looks for. */
enum key { K_NONE, K_PROCESSES, K_EVENTS };

/* The stream handed to jansson: the text as it is, but for the lifted
 * arrays, each replaced by '[', its line breaks and ']'. */
struct feed {
	struct tracetext *tt;
	const unsigned char *s;
	size_t len, pos;
	struct mapfile *map;
	struct mapguard guard;
	/* where the scan stands: JSON nesting (only the first three levels
	 * matter), strings, the last string if it was a key of ours, the key
	 * whose value comes next, and whether level 2 is root."processes" and
	 * level 3 one of its objects (the proc-th) */
	bool in_str, esc;
	size_t depth, str_start;
	enum key last_str, await;
	bool procs_open, proc_obj;
	size_t proc;
	/* what is left of a replacement being handed on */
	size_t nl_left;
	bool close_left;
	/* the rows of the array being lifted (here, not in lift's frame, so
	 * that a SIGBUS that abandons lift leaves them to be freed) */
	struct trace_event *work;
	size_t nwork, cap;
};

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Skips JSON whitespace from *i, counting line breaks into *nl. */
static void skip_ws(const unsigned char *s, size_t len, size_t *i, size_t *nl)
{
	size_t k = *i;
	for (; k < len && is_ws(s[k]); k++)
		*nl += s[k] == '\n';
	*i = k;
}

/* A JSON integer without sign, fraction or exponent that jansson keeps as an
 * integer (at most INT64_MAX); false for anything else. */
static bool plain_uint(const unsigned char *s, size_t len, size_t *i, uint64_t *out)
{
	size_t k = *i;
	if (k >= len || s[k] < '0' || s[k] > '9')
		return false;
	uint64_t v = 0;
	if (s[k] == '0') {
		k++;
	} else {
		for (; k < len && s[k] >= '0' && s[k] <= '9'; k++) {
			uint64_t d = (uint64_t)(s[k] - '0');
			if (v > ((uint64_t)INT64_MAX - d) / 10)
				return false;
			v = v * 10 + d;
		}
	}
	if (k < len && ((s[k] >= '0' && s[k] <= '9') || s[k] == '.' || s[k] == 'e' || s[k] == 'E'))
		return false;
	*out = v;
	*i = k;
	return true;
}

/* The rows of the array starting at s[at] == '[', counted before they are
 * read so that they are read into one allocation of the right size (no
 * copies while it grows: the array is most of the file). *plain is false
 * when it holds anything but digits, commas, whitespace and rows of them, or
 * does not end (then it is not lifted). */
static size_t count_rows(const struct feed *f, size_t at, bool *plain)
{
	const unsigned char *s = f->s;
	size_t rows = 0, depth = 0;
	*plain = false;
	for (size_t i = at + 1, released = at; i < f->len; i++) {
		unsigned char c = s[i];
		if ((c >= '0' && c <= '9') || c == ',' || is_ws(c))
			continue;
		if (c == '[') {
			if (depth++)
				return 0;
			rows++;
		} else if (c == ']') {
			if (!depth) {
				*plain = true;
				return rows;
			}
			depth--;
		} else {
			return 0;
		}
		if (f->map && i - released >= ((size_t)1 << 20)) {
			mapfile_release(f->map, i);
			released = i;
		}
	}
	return 0;
}

/* Reads the array starting at s[at] == '[' as rows of events into out;
 * the index after its ']' and its line breaks, or 0 when it is anything
 * but plain in-range rows (out untouched). Pages already read go back to
 * the kernel as it reads. */
static size_t lift(struct feed *f, size_t at, struct tracetext_events *out, size_t *nl)
{
	const unsigned char *s = f->s;
	size_t len = f->len, i = at + 1, released = at;
	bool plain;
	f->cap = count_rows(f, at, &plain);
	if (!plain)
		return 0;
	if (f->map)
		mapfile_reread(f->map, at);
	f->work = f->cap ? xmalloc(f->cap * sizeof *f->work) : NULL;
	f->nwork = 0;
	*nl = 0;
	skip_ws(s, len, &i, nl);
	if (i < len && s[i] == ']')
		goto done;
	for (;;) {
		uint64_t v[TRACE_EVENT_FIELDS];
		if (i >= len || s[i] != '[')
			goto fail;
		i++;
		for (size_t k = 0; k < TRACE_EVENT_FIELDS; k++) {
			skip_ws(s, len, &i, nl);
			if (!plain_uint(s, len, &i, &v[k]))
				goto fail;
			skip_ws(s, len, &i, nl);
			if (i >= len || s[i] != (k + 1 < TRACE_EVENT_FIELDS ? ',' : ']'))
				goto fail;
			i++;
		}
		if (f->nwork == f->cap) /* more than counted: the file changed */
			goto fail;
		if (!trace_event_from_row(v, &f->work[f->nwork]))
			goto fail;
		f->nwork++;
		skip_ws(s, len, &i, nl);
		if (i < len && s[i] == ',') {
			i++;
			skip_ws(s, len, &i, nl);
		} else if (i < len && s[i] == ']') {
			break;
		} else {
			goto fail;
		}
		if (f->map && i - released >= ((size_t)1 << 20)) {
			mapfile_release(f->map, i);
			released = i;
		}
	}
done:
	free(out->ev);
	out->ev = f->work;
	out->n = f->nwork;
	out->lifted = true;
	f->work = NULL;
	f->nwork = f->cap = 0;
	return i + 1;
fail:
	free(f->work);
	f->work = NULL;
	f->nwork = f->cap = 0;
	return 0;
}

/* The slot of process i, made if needed. */
static struct tracetext_events *slot(struct tracetext *tt, size_t i)
{
	if (i >= tt->nprocs) {
		size_t n = i + 1 > tt->nprocs * 2 ? i + 1 : tt->nprocs * 2;
		tt->procs = xrealloc(tt->procs, n * sizeof *tt->procs);
		memset(tt->procs + tt->nprocs, 0, (n - tt->nprocs) * sizeof *tt->procs);
		tt->nprocs = n;
	}
	return &tt->procs[i];
}

/* Which of our keys the string s[from..to) is at this place, if any. */
static enum key key_of(const struct feed *f, size_t from, size_t to)
{
	size_t n = to - from;
	if (f->depth == 1 && n == 9 && memcmp(f->s + from, "processes", 9) == 0)
		return K_PROCESSES;
	if (f->depth == 3 && f->proc_obj && n == 6 && memcmp(f->s + from, "events", 6) == 0)
		return K_EVENTS;
	return K_NONE;
}

/* Fills out[0..n) with the next part of the stream; how many bytes. */
static size_t fill(struct feed *f, unsigned char *out, size_t n)
{
	size_t o = 0;
	while (o < n) {
		if (f->nl_left) {
			out[o++] = '\n';
			f->nl_left--;
			continue;
		}
		if (f->close_left) {
			out[o++] = ']';
			f->close_left = false;
			continue;
		}
		if (f->pos >= f->len)
			break;
		unsigned char c = f->s[f->pos];
		if (f->in_str) {
			if (f->esc)
				f->esc = false;
			else if (c == '\\')
				f->esc = true;
			else if (c == '"') {
				f->in_str = false;
				f->last_str = key_of(f, f->str_start, f->pos);
			}
			out[o++] = c;
			f->pos++;
			continue;
		}
		if (is_ws(c)) {
			out[o++] = c;
			f->pos++;
			continue;
		}
		enum key await = f->await, last = f->last_str;
		f->await = K_NONE;
		f->last_str = K_NONE;
		switch (c) {
		case '"':
			f->in_str = true;
			f->str_start = f->pos + 1;
			break;
		case ':':
			f->await = last;
			break;
		case '[':
		case '{':
			if (c == '[' && await == K_EVENTS && f->depth == 3) {
				size_t nl, end = lift(f, f->pos, slot(f->tt, f->proc), &nl);
				if (end) {
					out[o++] = '[';
					f->nl_left = nl;
					f->close_left = true;
					f->pos = end;
					continue;
				}
			}
			f->depth++;
			if (c == '[' && await == K_PROCESSES && f->depth == 2) {
				f->procs_open = true;
				f->proc = 0;
			}
			if (f->depth == 3)
				f->proc_obj = c == '{' && f->procs_open;
			break;
		case ']':
		case '}':
			if (f->depth)
				f->depth--;
			if (f->depth < 2)
				f->procs_open = false;
			if (f->depth < 3)
				f->proc_obj = false;
			break;
		case ',':
			if (f->depth == 2 && f->procs_open)
				f->proc++;
			break;
		default:
			break;
		}
		out[o++] = c;
		f->pos++;
	}
	if (f->map)
		mapfile_release(f->map, f->pos);
	return o;
}

/* jansson's source: fill, with a SIGBUS from the map ending the stream as a
 * read error. */
static size_t feed_cb(void *buffer, size_t buflen, void *data)
{
	struct feed *f = data;
	if (!f->map)
		return fill(f, buffer, buflen);
	mapfile_guard_begin(&f->guard);
	if (sigsetjmp(f->guard.jb, 1) != 0) {
		f->tt->shrank = true;
		return (size_t)-1;
	}
	size_t got = fill(f, buffer, buflen);
	mapfile_guard_end(&f->guard);
	return got;
}

json_t *tracetext_load(struct tracetext *tt, const char *text, size_t len, struct mapfile *map,
		       size_t flags, json_error_t *err)
{
	struct feed f;
	memset(&f, 0, sizeof f);
	f.tt = tt;
	f.s = (const unsigned char *)text;
	f.len = len;
	f.map = map && map->data ? map : NULL;
	if (f.map)
		mapfile_guard_init(&f.guard, f.map, NULL);
	json_t *root = json_load_callback(feed_cb, &f, flags, err);
	free(f.work); /* rows of an array whose reading a SIGBUS abandoned */
	return root;
}

bool tracetext_take(struct tracetext *tt, size_t i, struct trace_event **ev, size_t *n)
{
	if (i >= tt->nprocs || !tt->procs[i].lifted)
		return false;
	*ev = tt->procs[i].ev;
	*n = tt->procs[i].n;
	tt->procs[i] = (struct tracetext_events){0};
	return true;
}

void tracetext_free(struct tracetext *tt)
{
	for (size_t i = 0; i < tt->nprocs; i++)
		free(tt->procs[i].ev);
	free(tt->procs);
	memset(tt, 0, sizeof *tt);
}
