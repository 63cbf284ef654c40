/* cache: the scan results of files that have not changed, so a re-scan
 * skips parsing (as ruff's cache does). An entry is keyed by a 128-bit hash
 * of the file's path and decoded text, gpuopt's version (the directory), the
 * knowledge data and the options that shape findings. Entries live under
 * $XDG_CACHE_HOME/gpuopt/VERSION/ (default ~/.cache/gpuopt/VERSION/), one
 * file each, written whole or not at all, so concurrent scans share it
 * safely. An index of path stats lets a re-scan find an unchanged file
 * without reading it. Each file carries a checksum of its bytes and of the
 * key that names it: a damaged one, or one copied over another's name, is
 * a miss (and is written again). Any problem with the cache only costs a
 * re-scan. */
#ifndef GPUOPT_CACHE_H
#define GPUOPT_CACHE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "kb.h"
#include "pyscan.h"
#include "python/source.h"

struct cache;

/* NULL when there is nowhere to keep a cache (no HOME or XDG_CACHE_HOME);
 * the other functions accept NULL and then do nothing. */
struct cache *cache_open(const struct kb *kb, bool keep_text);
void cache_close(struct cache *c);

/* Fills out (owned by the caller) and returns true on a hit. The strings
 * library / display / target point into the cache: use them before
 * cache_close. Safe to call from several threads. st: the file's stat,
 * taken before it was read, or NULL; given, a hit (and every put) is also
 * recorded in the index for the next run's cache_get_unchanged. */
bool cache_get(struct cache *c, const struct source *src, const struct stat *st,
	       struct scan_result *out);
void cache_put(struct cache *c, const struct source *src, const struct stat *st,
	       const struct scan_result *res);

/* Finds path by its stat (st, taken before any read) in the index of
 * earlier runs, without reading the file: on a hit fills out (as cache_get)
 * and *notebook. Safe to call from several threads. */
bool cache_get_unchanged(struct cache *c, const char *path, const struct stat *st,
			 struct scan_result *out, bool *notebook);

/* Is path in the index of earlier runs with this stat (st, taken before any
 * read)? Reads nothing; such a file was scanned alone (it takes no part in
 * a project's cross-module facts, which are never cached). */
bool cache_known_unchanged(struct cache *c, const char *path, const struct stat *st);

/* For the fuzz target and tests: what a read of these bytes from the cache
 * directory would give, as the entry of key 0 or the index of that key.
 * cache_decode_entry fills out (as cache_get) when data is a valid entry;
 * cache_decode_index returns how many paths data holds as an index, or -1
 * when it is not one. */
bool cache_decode_entry(struct cache *c, const char *data, size_t len, struct scan_result *out);
long cache_decode_index(const char *data, size_t len);

/* For the fuzz target: makes the checksum of an entry's or index's bytes
 * (len of them, from the magic on) match the rest and key 0, as a write
 * does, so changed bytes reach the decoder instead of the checksum's
 * refusal. */
void cache_seal(char *data, size_t len);

#endif
