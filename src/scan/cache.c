/* cache: see cache.h.
 *
 * Entry format (native byte order; a cache is per machine): the magic
 * "GPUOPTC4", a u64 checksum (XXH3-64 of every byte after it, seeded with
 * the XXH3-64 of the entry's 128-bit key, high half then low: a damaged
 * entry is a miss, and the scan writes it again; so is an entry copied or
 * moved over another key's file, sealed with a key not its name's), u32
 * count, u32 syntax-error line and cell, u32 line and cell where the flow
 * model's work budget ran out (0: it did not) and the string of the
 * function it was in (C3 had neither), then per finding twelve u32 (line, col, end_line, end_col, cell, start_byte, end_byte,
 * rank, loop_line, the rule's index in the knowledge data, file_line,
 * file_end_line) and nine strings
 * (library, display, target, symbol, message, fix, headline, line_text,
 * rank_reason), each a u32 length (0xFFFFFFFF for none), the bytes and a
 * NUL. A hit keeps the entry as read and points the findings' strings into
 * it, so decoding copies nothing. A short or inconsistent entry is a miss,
 * never an error.
 *
 * The index (one file per salt, "index-SALT") remembers, for each path
 * scanned before, its stat (device, inode, size, mtime, ctime) and its
 * entry's key, so an unchanged file is found without reading and hashing
 * it, as git's index does. Entries stay keyed by content: the index only
 * says which content a path had. A file changed less than two seconds
 * before it was read is not indexed (its mtime could hide a later write
 * in the same tick), nor is anything whose stat changed since. Format:
 * "GPUOPTI3", the u64 checksum as above (bound to the salt instead of a
 * key: another salt's index copied over this one is refused), u32 count,
 * then per path u32 length, the bytes and a NUL, seven u64 (dev, ino, size, mtime s, mtime ns, ctime s, ctime ns), u8
 * notebook and the two u64 halves of the key. */
#include "cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/fileio.h"
#include "core/symtab.h"
#include "core/util.h"
#include "core/version.h"

#define MAGIC "GPUOPTC4"
#define INDEX_MAGIC "GPUOPTI3"
#define HEAD 16 /* the magic and the checksum */
#define NONE_LEN 0xFFFFFFFFu
/* Most paths the index keeps (the newest run's first). */
#define INDEX_MAX 400000u

struct ientry {
	char *path; /* owned */
	uint64_t st[7];
	bool notebook;
	XXH128_hash_t key;
};

struct cache {
	const struct kb *kb;
	char *dir;             /* .../gpuopt/<version> */
	uint64_t salt;         /* the knowledge data and the options that shape findings */
	uint64_t gen;          /* this cache_open's number (see intern) */
	pthread_mutex_t mu;    /* guards pool and fresh */
	struct symtab pool;    /* interned library / display / target strings (the keys) */
	struct ientry *old;    /* the index as loaded; read-only during the run */
	atomic_bool *hit;      /* old[i] was found unchanged in this run */
	uint32_t nold;
	uint32_t *slots;       /* open addressing over old, by path hash; UINT32_MAX empty */
	uint32_t nslots;
	struct ientry *fresh;  /* what this run learned */
	size_t nfresh, capfresh;
};

/* Bumped by each cache_open: tells a thread's memo of interned strings
 * (see intern) that a cache is not the one it remembers. */
static atomic_uint_least64_t generation;

static void index_load(struct cache *c);
static void index_free(struct cache *c);
static void index_save(struct cache *c);
static void note(struct cache *c, const struct source *src, const struct stat *st, XXH128_hash_t key);

/* The checksum of a file's bytes after the head and of what names the file
 * (an entry's key, the index's salt): a file copied or moved over another's
 * name fails its check, as a damaged one does. */
static uint64_t checksum(const char *data, size_t len, XXH128_hash_t bound)
{
	if (len < HEAD)
		return 0;
	uint64_t words[2] = {bound.high64, bound.low64};
	return XXH3_64bits_withSeed(data + HEAD, len - HEAD, XXH3_64bits(words, sizeof words));
}

/* What the index of salt binds its checksum to. */
static XXH128_hash_t index_bound(uint64_t salt)
{
	return (XXH128_hash_t){.low64 = salt, .high64 = 0x696e646578ull /* "index" */};
}

static void seal(char *data, size_t len, XXH128_hash_t bound)
{
	if (len >= HEAD) {
		uint64_t h = checksum(data, len, bound);
		memcpy(data + 8, &h, sizeof h);
	}
}

void cache_seal(char *data, size_t len)
{
	seal(data, len, (XXH128_hash_t){0, 0});
}

/* True when the bytes after the head, named by bound, are the ones the
 * head's checksum was made of. */
static bool intact(const char *data, size_t len, XXH128_hash_t bound)
{
	uint64_t h;
	if (len < HEAD)
		return false;
	memcpy(&h, data + 8, sizeof h);
	return h == checksum(data, len, bound);
}

/* Seals b (its checksum, bound to what names it) and writes it to path,
 * whole or not at all. A failed write only costs a re-scan; the directory
 * is made on the first failure, not checked on every write. */
static void write_cache_file(char *path, struct buf *b, XXH128_hash_t bound)
{
	seal(b->data, b->len, bound);
	char *why = NULL;
	if (!write_file_replace(path, b->data, b->len, &why)) {
		char *slash = strrchr(path, '/');
		*slash = '\0';
		bool ok = make_dirs(path);
		*slash = '/';
		free(why);
		why = NULL;
		if (ok)
			write_file_replace(path, b->data, b->len, &why);
	}
	free(why);
}

struct cache *cache_open(const struct kb *kb, bool keep_text)
{
	char *base = user_cache_dir();
	if (!base)
		return NULL;
	struct cache *c = xcalloc(1, sizeof *c);
	c->kb = kb;
	c->dir = xasprintf("%s/%s", base, GPUOPT_VERSION);
	free(base);
	c->salt = XXH3_64bits_withSeed(&keep_text, sizeof keep_text, kb->digest);
	c->gen = atomic_fetch_add(&generation, 1) + 1;
	pthread_mutex_init(&c->mu, NULL);
	index_load(c);
	return c;
}

void cache_close(struct cache *c)
{
	if (!c)
		return;
	index_save(c);
	index_free(c);
	for (size_t i = 0; i < c->nfresh; i++)
		free(c->fresh[i].path);
	free(c->fresh);
	symtab_free(&c->pool);
	pthread_mutex_destroy(&c->mu);
	free(c->dir);
	free(c);
}

/* The entry's file name: a 128-bit hash of everything the findings depend on. */
static XXH128_hash_t entry_key(const struct cache *c, const struct source *src)
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
	return h;
}

static char *key_path(const struct cache *c, XXH128_hash_t h)
{
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
	buf_append(b, s, n + 1);
}

void cache_put(struct cache *c, const struct source *src, const struct stat *st,
	       const struct scan_result *res)
{
	if (!c)
		return;
	XXH128_hash_t key = entry_key(c, src);
	struct buf b = {0};
	buf_append(&b, MAGIC, 8);
	buf_append(&b, "\0\0\0\0\0\0\0\0", 8); /* the checksum, by write_cache_file */
	put_u32(&b, (uint32_t)res->n);
	put_u32(&b, res->syntax_error_line);
	put_u32(&b, res->syntax_error_cell);
	put_u32(&b, res->budget_line);
	put_u32(&b, res->budget_cell);
	put_str(&b, res->budget_func);
	for (size_t i = 0; i < res->n; i++) {
		const struct finding *f = &res->items[i];
		uint32_t nums[] = {f->line, f->col, f->end_line, f->end_col, f->cell,
				   f->start_byte, f->end_byte, f->rank, f->loop_line,
				   (uint32_t)f->rule->index, f->file_line, f->file_end_line};
		buf_append(&b, nums, sizeof nums);
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
	char *path = key_path(c, key);
	write_cache_file(path, &b, key);
	free(path);
	buf_free(&b);
	if (st)
		note(c, src, st, key);
}

/* ---- reading ---- */

struct reader {
	char *p, *end;
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

/* A string in place (the entry stays in memory); *len its length. */
static char *get_str(struct reader *r, uint32_t *len)
{
	uint32_t n = get_u32(r);
	*len = 0;
	if (r->bad || n == NONE_LEN)
		return NULL;
	if ((size_t)(r->end - r->p) <= n || r->p[n] != '\0') {
		r->bad = true;
		return NULL;
	}
	char *s = r->p;
	r->p += n + 1;
	*len = n;
	return s;
}

/* One shared copy of a short string (s, n bytes, NUL-terminated) for the
 * whole run, so equal strings are equal pointers (the report tallies by
 * pointer): the keys of the pool. Each thread remembers its recent
 * answers, so a hit takes no lock. */
static const char *intern(struct cache *c, const char *s, uint32_t n)
{
	enum { MEMO = 64 };
	static _Thread_local struct {
		uint64_t gen, h;
		const char *s;
	} memo[MEMO];
	if (!s)
		return NULL;
	uint64_t h = XXH3_64bits(s, n);
	size_t m = h & (MEMO - 1);
	if (memo[m].gen == c->gen && memo[m].h == h && strcmp(memo[m].s, s) == 0)
		return memo[m].s;
	pthread_mutex_lock(&c->mu);
	const struct binding *b = symtab_get(&c->pool, s, n);
	if (!b) {
		symtab_set(&c->pool, s, n, B_QUAL, NULL, -1);
		b = symtab_get(&c->pool, s, n);
	}
	const char *found = b->name; /* stays put when the table grows */
	pthread_mutex_unlock(&c->mu);
	memo[m].gen = c->gen;
	memo[m].h = h;
	memo[m].s = found;
	return found;
}

/* get_str, then intern: a string with a NUL inside is a damaged entry
 * (the pool's keys hold none). */
static const char *get_interned(struct cache *c, struct reader *r)
{
	uint32_t n;
	const char *s = get_str(r, &n);
	if (s && strlen(s) != n) {
		r->bad = true;
		return NULL;
	}
	return intern(c, s, n);
}

static bool get_by_key(struct cache *c, XXH128_hash_t key, struct scan_result *out);

bool cache_get(struct cache *c, const struct source *src, const struct stat *st,
	       struct scan_result *out)
{
	memset(out, 0, sizeof *out);
	if (!c)
		return false;
	XXH128_hash_t key = entry_key(c, src);
	if (!get_by_key(c, key, out))
		return false;
	if (st)
		note(c, src, st, key);
	return true;
}

/* Reads a cache file (taking path) into b if it starts with magic and has
 * at least `min` bytes; anything else, a missing file included, is false. */
static bool read_cache_file(char *path, const char *magic, size_t min, struct buf *b)
{
	char *why = NULL;
	bool found = read_file(path, 256u << 20, b, &why);
	free(why);
	free(path);
	if (found && b->len >= min && memcmp(b->data, magic, 8) == 0)
		return true;
	buf_free(b);
	return false;
}

/* Decodes the entry of key (data: len bytes from the magic on, then a NUL;
 * taken) into out, whose strings then point into data. */
static bool decode_entry(struct cache *c, XXH128_hash_t key, char *data, size_t len, struct scan_result *out)
{
	memset(out, 0, sizeof *out);
	if (len < HEAD || memcmp(data, MAGIC, 8) != 0 || !intact(data, len, key)) {
		free(data);
		return false;
	}
	struct reader r = {data + HEAD, data + len, false};
	uint32_t n = get_u32(&r);
	out->syntax_error_line = get_u32(&r);
	out->syntax_error_cell = get_u32(&r);
	out->budget_line = get_u32(&r);
	out->budget_cell = get_u32(&r);
	uint32_t fl;
	char *func = get_str(&r, &fl);
	if (r.bad || n > len / 84 || (func && strlen(func) != fl)) { /* each finding takes at least 84 bytes */
		free(data);
		memset(out, 0, sizeof *out);
		return false;
	}
	out->items = xcalloc(n ? n : 1, sizeof *out->items);
	out->cap = n;
	out->strings = data; /* the findings' strings point into the entry */
	out->budget_func = func;
	for (uint32_t i = 0; i < n && !r.bad; i++) {
		struct finding *f = &out->items[out->n++];
		uint32_t nums[12];
		if ((size_t)(r.end - r.p) < sizeof nums) {
			r.bad = true;
			break;
		}
		memcpy(nums, r.p, sizeof nums);
		r.p += sizeof nums;
		f->line = nums[0];
		f->col = nums[1];
		f->end_line = nums[2];
		f->end_col = nums[3];
		f->cell = nums[4];
		f->start_byte = nums[5];
		f->end_byte = nums[6];
		f->rank = nums[7];
		f->loop_line = nums[8];
		f->rule = nums[9] < c->kb->nrules ? &c->kb->rules[nums[9]] : NULL;
		f->file_line = nums[10];
		f->file_end_line = nums[11];
		f->func = -1;
		f->library = get_interned(c, &r);
		f->display = get_interned(c, &r);
		f->target = get_interned(c, &r);
		uint32_t sl;
		f->symbol = get_str(&r, &sl);
		f->message = get_str(&r, &sl);
		f->fix = get_str(&r, &sl);
		f->headline = get_str(&r, &sl);
		f->line_text = get_str(&r, &sl);
		f->rank_reason = get_str(&r, &sl);
		if (!f->rule || !f->library || !f->symbol || !f->message)
			r.bad = true;
	}
	bool ok = !r.bad && r.p == r.end;
	if (!ok)
		scan_result_free(out); /* frees data, now out->strings */
	return ok;
}

static bool get_by_key(struct cache *c, XXH128_hash_t key, struct scan_result *out)
{
	struct buf b = {0};
	if (!read_cache_file(key_path(c, key), MAGIC, HEAD, &b))
		return false;
	return decode_entry(c, key, b.data, b.len, out);
}

bool cache_decode_entry(struct cache *c, const char *data, size_t len, struct scan_result *out)
{
	char *copy = xmalloc(len + 1);
	memcpy(copy, data, len);
	copy[len] = '\0';
	return decode_entry(c, (XXH128_hash_t){0, 0}, copy, len, out);
}

/* ---- the stat index ---- */

static void stat_words(const struct stat *st, uint64_t w[7])
{
	w[0] = (uint64_t)st->st_dev;
	w[1] = (uint64_t)st->st_ino;
	w[2] = (uint64_t)st->st_size;
	w[3] = (uint64_t)st->st_mtim.tv_sec;
	w[4] = (uint64_t)st->st_mtim.tv_nsec;
	w[5] = (uint64_t)st->st_ctim.tv_sec;
	w[6] = (uint64_t)st->st_ctim.tv_nsec;
}

static char *index_path(const struct cache *c)
{
	return xasprintf("%s/index-%016llx", c->dir, (unsigned long long)c->salt);
}

static uint32_t slot_of(const struct cache *c, const char *path)
{
	return (uint32_t)(XXH3_64bits(path, strlen(path)) & (c->nslots - 1));
}

static void index_free(struct cache *c)
{
	for (uint32_t i = 0; i < c->nold; i++)
		free(c->old[i].path);
	free(c->old);
	free(c->hit);
	free(c->slots);
	c->old = NULL;
	c->hit = NULL;
	c->slots = NULL;
	c->nold = c->nslots = 0;
}

/* Parses an index's bytes (len of them, from the magic on, sealed with
 * bound) into c->old; anything short or odd leaves it empty. */
static void index_parse(struct cache *c, const char *data, size_t len, XXH128_hash_t bound)
{
	if (len < HEAD + 4 || memcmp(data, INDEX_MAGIC, 8) != 0 || !intact(data, len, bound))
		return;
	struct reader r = {(char *)data + HEAD, (char *)data + len, false};
	uint32_t n = get_u32(&r);
	if (n > INDEX_MAX || n > len / 60)
		return;
	c->old = xcalloc(n ? n : 1, sizeof *c->old);
	for (uint32_t i = 0; i < n && !r.bad; i++) {
		struct ientry *e = &c->old[c->nold];
		uint32_t plen;
		const char *path = get_str(&r, &plen);
		if (!path || (size_t)(r.end - r.p) < sizeof e->st + 1 + 16) {
			r.bad = true;
			break;
		}
		e->path = xstrndup(path, plen);
		memcpy(e->st, r.p, sizeof e->st);
		r.p += sizeof e->st;
		e->notebook = *r.p++ != 0;
		memcpy(&e->key.high64, r.p, 8);
		memcpy(&e->key.low64, r.p + 8, 8);
		r.p += 16;
		c->nold++;
	}
	if (r.bad || r.p != r.end) {
		index_free(c);
		return;
	}
	c->nslots = 16;
	while (c->nslots < 2 * c->nold)
		c->nslots *= 2;
	c->slots = xmalloc(c->nslots * sizeof *c->slots);
	memset(c->slots, 0xFF, c->nslots * sizeof *c->slots);
	for (uint32_t i = 0; i < c->nold; i++) {
		uint32_t k = slot_of(c, c->old[i].path);
		while (c->slots[k] != UINT32_MAX)
			k = (k + 1) & (c->nslots - 1);
		c->slots[k] = i;
	}
	c->hit = xmalloc(c->nold ? c->nold * sizeof *c->hit : 1);
	for (uint32_t i = 0; i < c->nold; i++)
		atomic_init(&c->hit[i], false);
}

static void index_load(struct cache *c)
{
	struct buf b = {0};
	if (!read_cache_file(index_path(c), INDEX_MAGIC, HEAD + 4, &b))
		return;
	index_parse(c, b.data, b.len, index_bound(c->salt));
	buf_free(&b);
}

long cache_decode_index(const char *data, size_t len)
{
	struct cache c = {0};
	index_parse(&c, data, len, (XXH128_hash_t){0, 0});
	long n = c.old ? (long)c.nold : -1;
	index_free(&c);
	return n;
}

static const struct ientry *index_find(const struct cache *c, const char *path)
{
	if (!c->nslots)
		return NULL;
	for (uint32_t k = slot_of(c, path); c->slots[k] != UINT32_MAX; k = (k + 1) & (c->nslots - 1))
		if (strcmp(c->old[c->slots[k]].path, path) == 0)
			return &c->old[c->slots[k]];
	return NULL;
}

/* Adds e (whose path it takes) to what this run learned. */
static void fresh_add(struct cache *c, struct ientry e)
{
	pthread_mutex_lock(&c->mu);
	if (c->nfresh == c->capfresh) {
		c->capfresh = c->capfresh ? c->capfresh * 2 : 1024;
		c->fresh = xrealloc(c->fresh, c->capfresh * sizeof *c->fresh);
	}
	c->fresh[c->nfresh++] = e;
	pthread_mutex_unlock(&c->mu);
}

bool cache_get_unchanged(struct cache *c, const char *path, const struct stat *st,
			 struct scan_result *out, bool *notebook)
{
	memset(out, 0, sizeof *out);
	if (!c)
		return false;
	const struct ientry *e = index_find(c, path);
	uint64_t w[7];
	stat_words(st, w);
	if (!e || memcmp(e->st, w, sizeof w) != 0 || !get_by_key(c, e->key, out))
		return false;
	*notebook = e->notebook;
	atomic_store_explicit(&c->hit[e - c->old], true, memory_order_relaxed);
	return true;
}

bool cache_known_unchanged(struct cache *c, const char *path, const struct stat *st)
{
	if (!c)
		return false;
	const struct ientry *e = index_find(c, path);
	uint64_t w[7];
	stat_words(st, w);
	return e && memcmp(e->st, w, sizeof w) == 0;
}

/* Records that src's path, whose stat was st before it was read, has the
 * content of entry key, for the next run (written by cache_close). */
static void note(struct cache *c, const struct source *src, const struct stat *st, XXH128_hash_t key)
{
	/* racily clean: a write in the same clock tick as this stat could go unseen */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec - st->st_mtim.tv_sec < 2 || now.tv_sec - st->st_ctim.tv_sec < 2)
		return;
	struct ientry e = {.path = xstrdup(src->path), .notebook = src->notebook, .key = key};
	stat_words(st, e.st);
	fresh_add(c, e);
}

static void put_entry(struct buf *b, const struct ientry *e)
{
	put_str(b, e->path);
	buf_append(b, e->st, sizeof e->st);
	buf_putc(b, (char)e->notebook);
	buf_append(b, &e->key.high64, 8);
	buf_append(b, &e->key.low64, 8);
}

/* Writes what this run learned, then the paths it found unchanged, then
 * the earlier ones it did not see (up to INDEX_MAX in all), whole or not
 * at all. Nothing learned: the index as it is still holds, and is kept. */
static void index_save(struct cache *c)
{
	if (!c->nfresh)
		return;
	bool *seen = xcalloc(c->nold ? c->nold : 1, 1);
	for (size_t i = 0; i < c->nfresh; i++) {
		const struct ientry *e = index_find(c, c->fresh[i].path);
		if (e)
			seen[e - c->old] = true;
	}
	struct buf b = {0};
	buf_append(&b, INDEX_MAGIC, 8);
	buf_append(&b, "\0\0\0\0\0\0\0\0", 8); /* the checksum, by write_cache_file */
	uint32_t n = 0;
	put_u32(&b, 0);
	for (size_t i = 0; i < c->nfresh && n < INDEX_MAX; i++, n++)
		put_entry(&b, &c->fresh[i]);
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < c->nold && n < INDEX_MAX; i++)
			if (!seen[i] && atomic_load(&c->hit[i]) == (pass == 0)) {
				put_entry(&b, &c->old[i]);
				n++;
			}
	memcpy(b.data + HEAD, &n, sizeof n);
	free(seen);
	char *path = index_path(c);
	write_cache_file(path, &b, index_bound(c->salt));
	free(path);
	buf_free(&b);
}
