/* cache: see cache.h.
 *
 * Entry format (native byte order; a cache is per machine): the magic
 * "GPUOPTC1", u32 count, u32 syntax-error line and cell, then per finding
 * nine u32 (line, col, end_line, end_col, cell, start_byte, end_byte, rank,
 * loop_line) and ten strings (rule id, library, display, target, symbol,
 * message, fix, headline, line_text, rank_reason), each a u32 length
 * (0xFFFFFFFF for none) and the bytes. A short or inconsistent entry is a
 * miss, never an error. */
#include "cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "fileio.h"
#include "util.h"
#include "version.h"

#define MAGIC "GPUOPTC1"
#define NONE_LEN 0xFFFFFFFFu

struct cache {
	const struct kb *kb;
	char *dir;             /* .../gpuopt/<version> */
	uint64_t salt;         /* the knowledge data and the options that shape findings */
	pthread_mutex_t mu;    /* guards pool */
	struct ptrvec pool;    /* interned library / display / target strings */
};

static bool mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			free(p);
			return false;
		}
		*s = '/';
	}
	bool ok = mkdir(p, 0755) == 0 || errno == EEXIST;
	free(p);
	return ok;
}

struct cache *cache_open(const struct kb *kb, bool keep_text)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *base;
	if (xdg && *xdg)
		base = xasprintf("%s/gpuopt", xdg);
	else if (home && *home)
		base = xasprintf("%s/.cache/gpuopt", home);
	else
		return NULL;
	struct cache *c = xcalloc(1, sizeof *c);
	c->kb = kb;
	c->dir = xasprintf("%s/%s", base, GPUOPT_VERSION);
	free(base);
	c->salt = XXH3_64bits_withSeed(&keep_text, sizeof keep_text, kb->digest);
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void cache_close(struct cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->pool.len; i++)
		free(c->pool.items[i]);
	ptrvec_free(&c->pool);
	pthread_mutex_destroy(&c->mu);
	free(c->dir);
	free(c);
}

/* The entry's file name: a 128-bit hash of everything the findings depend on. */
static char *entry_path(const struct cache *c, const struct source *src)
{
	XXH3_state_t *st = XXH3_createState();
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, &c->salt, sizeof c->salt);
	XXH3_128bits_update(st, src->path, strlen(src->path) + 1);
	XXH3_128bits_update(st, &src->notebook, sizeof src->notebook);
	XXH3_128bits_update(st, src->text, src->len);
	if (src->notebook) {
		XXH3_128bits_update(st, src->line_cell, src->nlines * sizeof *src->line_cell);
		XXH3_128bits_update(st, src->line_in_cell, src->nlines * sizeof *src->line_in_cell);
	}
	XXH128_hash_t h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	return xasprintf("%s/%02x/%014llx%016llx", c->dir, (unsigned)(h.high64 >> 56),
			 (unsigned long long)(h.high64 & 0x00FFFFFFFFFFFFFFull), (unsigned long long)h.low64);
}

/* ---- writing ---- */

static void put_u32(struct buf *b, uint32_t v)
{
	buf_append(b, &v, sizeof v);
}

static void put_str(struct buf *b, const char *s)
{
	if (!s) {
		put_u32(b, NONE_LEN);
		return;
	}
	uint32_t n = (uint32_t)strlen(s);
	put_u32(b, n);
	buf_append(b, s, n);
}

void cache_put(struct cache *c, const struct source *src, const struct scan_result *res)
{
	if (!c)
		return;
	struct buf b = {0};
	buf_append(&b, MAGIC, 8);
	put_u32(&b, (uint32_t)res->n);
	put_u32(&b, res->syntax_error_line);
	put_u32(&b, res->syntax_error_cell);
	for (size_t i = 0; i < res->n; i++) {
		const struct finding *f = &res->items[i];
		uint32_t nums[] = {f->line, f->col, f->end_line, f->end_col, f->cell,
				   f->start_byte, f->end_byte, f->rank, f->loop_line};
		buf_append(&b, nums, sizeof nums);
		put_str(&b, f->rule->id);
		put_str(&b, f->library);
		put_str(&b, f->display);
		put_str(&b, f->target);
		put_str(&b, f->symbol);
		put_str(&b, f->message);
		put_str(&b, f->fix);
		put_str(&b, f->headline);
		put_str(&b, f->line_text);
		put_str(&b, f->rank_reason);
	}
	char *path = entry_path(c, src);
	char *why = NULL;
	/* A failed write only costs a re-scan; the directory is made on the
	 * first miss, not checked on every write. */
	if (!write_file_replace(path, b.data, b.len, &why)) {
		char *slash = strrchr(path, '/');
		*slash = '\0';
		bool ok = mkdirs(path);
		*slash = '/';
		free(why);
		why = NULL;
		if (ok)
			write_file_replace(path, b.data, b.len, &why);
	}
	free(why);
	free(path);
	buf_free(&b);
}

/* ---- reading ---- */

struct reader {
	const char *p, *end;
	bool bad;
};

static uint32_t get_u32(struct reader *r)
{
	uint32_t v = 0;
	if ((size_t)(r->end - r->p) < sizeof v) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, sizeof v);
	r->p += sizeof v;
	return v;
}

static char *get_str(struct reader *r)
{
	uint32_t n = get_u32(r);
	if (r->bad || n == NONE_LEN)
		return NULL;
	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	char *s = xstrndup(r->p, n);
	r->p += n;
	return s;
}

/* One shared copy of a short string for the whole run (borrowed fields). */
static const char *intern(struct cache *c, char *s)
{
	if (!s)
		return NULL;
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->pool.len; i++)
		if (strcmp(c->pool.items[i], s) == 0) {
			pthread_mutex_unlock(&c->mu);
			free(s);
			return c->pool.items[i];
		}
	ptrvec_push(&c->pool, s);
	pthread_mutex_unlock(&c->mu);
	return s;
}

bool cache_get(struct cache *c, const struct source *src, struct scan_result *out)
{
	memset(out, 0, sizeof *out);
	if (!c)
		return false;
	char *path = entry_path(c, src);
	struct buf b = {0};
	char *why = NULL;
	bool found = read_file(path, 256u << 20, &b, &why);
	free(why);
	free(path);
	if (!found || b.len < 8 || memcmp(b.data, MAGIC, 8) != 0) {
		buf_free(&b);
		return false;
	}
	struct reader r = {b.data + 8, b.data + b.len, false};
	uint32_t n = get_u32(&r);
	out->syntax_error_line = get_u32(&r);
	out->syntax_error_cell = get_u32(&r);
	if (r.bad || n > b.len / 40) {
		buf_free(&b);
		return false;
	}
	out->items = xcalloc(n ? n : 1, sizeof *out->items);
	out->cap = n;
	for (uint32_t i = 0; i < n && !r.bad; i++) {
		struct finding *f = &out->items[out->n++];
		f->line = get_u32(&r);
		f->col = get_u32(&r);
		f->end_line = get_u32(&r);
		f->end_col = get_u32(&r);
		f->cell = get_u32(&r);
		f->start_byte = get_u32(&r);
		f->end_byte = get_u32(&r);
		f->rank = get_u32(&r);
		f->loop_line = get_u32(&r);
		f->func = -1;
		char *rule = get_str(&r);
		f->rule = rule ? kb_rule(c->kb, rule) : NULL;
		free(rule);
		f->library = intern(c, get_str(&r));
		f->display = intern(c, get_str(&r));
		f->target = intern(c, get_str(&r));
		f->symbol = get_str(&r);
		f->message = get_str(&r);
		f->fix = get_str(&r);
		f->headline = get_str(&r);
		f->line_text = get_str(&r);
		f->rank_reason = get_str(&r);
		if (!f->rule || !f->library || !f->symbol || !f->message)
			r.bad = true;
	}
	bool ok = !r.bad && r.p == r.end;
	buf_free(&b);
	if (!ok)
		scan_result_free(out);
	return ok;
}
