/* scan: the scan engine's face for code. scan_paths() walks the paths (as
 * `gpuopt scan` does: directories recursively, skipping VCS folders,
 * virtual environments and whatever an exclude glob names), scans every
 * file on worker threads, with the cache of results for unchanged files,
 * and hands each file's outcome to a sink in input order. */
#ifndef GPUOPT_SCAN_H
#define GPUOPT_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "cache.h"
#include "kb.h"
#include "report.h"

struct scan_options {
	const struct kb *kb;         /* borrowed; kb_load() */
	char *const *excludes;       /* NULL-terminated globs, or NULL */
	int jobs;                    /* threads, the caller's included; < 1: one per CPU */
	struct cache *cache;         /* borrowed, or NULL: no cache. cache_open(kb, keep_text);
				      * strings of the results handed to the sink may live
				      * in it, so close it only when done with them */
	bool keep_text;              /* findings keep their source line (for a text report) */
	const struct report_options *render; /* render each file in its worker for this
					      * format (report_render), or NULL */
};

struct scan_sink {
	/* Each path that could not be walked at all (a missing path, a broken
	 * link, a symlink loop), before any file is handed over. */
	void (*path_error)(void *ctx, const char *path, const char *message);
	/* Each file's outcome, in input order, on the calling thread: sf->ok and
	 * sf->res, or sf->error saying why it could not be read. sf and what it
	 * holds are freed when the call returns. */
	void (*file)(void *ctx, const struct scan_file *sf);
	void *ctx;
};

struct scan_stats {
	size_t files;        /* files handed to the sink */
	size_t path_errors;
	double seconds;      /* wall time of the whole scan */
};

/* Scans paths (files, directories, "-" for stdin; none: "."). Never fails
 * as a whole: every problem reaches the sink, naming its path. stats may be
 * NULL. */
void scan_paths(const struct scan_options *o, char *const *paths, size_t npaths,
		const struct scan_sink *sink, struct scan_stats *stats);

#endif
