/* fileio: whole-file reads with a size limit, and whole-or-nothing writes
 * (a temporary file in the same directory, then rename). */
#ifndef GPUOPT_FILEIO_H
#define GPUOPT_FILEIO_H

#include <stdbool.h>
#include <stdio.h>

#include "util.h"

/* Reads all of `path` ("-" = stdin) into out (appended; NUL-terminated).
 * Returns true on success. On failure returns false and sets *why to a
 * static or owned message: the caller frees *why_owned if non-NULL. */
bool read_file(const char *path, size_t limit, struct buf *out, char **why);

/* Writes all len bytes of data to fd, retrying short writes and EINTR.
 * False (errno set) on an error. */
bool write_all(int fd, const char *data, size_t len);

/* Writes data to path atomically: the file is either the whole new content
 * or untouched. "-" writes to stdout. Returns false and sets *why (owned,
 * caller frees) on failure. */
bool write_file_atomic(const char *path, const char *data, size_t len, char **why);

/* The same without waiting for the disk: readers see the old or the new
 * content, never a mix, but a crash may lose the new one. For caches. */
bool write_file_replace(const char *path, const char *data, size_t len, char **why);

/* A file written whole or not at all: writes go to a temporary file in the
 * same directory, which atomic_commit renames over path. Path "-" writes to
 * stdout directly. */
struct atomic_file {
	FILE *f;    /* fully buffered with a large buffer */
	char *tmp;  /* owned; NULL for stdout */
	char *path; /* owned */
	char *buf;  /* owned: f's buffer */
	int fd;     /* the temporary's descriptor (f writes to it) */
};
/* Returns false and sets *why (owned) if the temporary cannot be created. */
bool atomic_open(struct atomic_file *af, const char *path, char **why);
/* Flushes and renames (no fsync: readers see the old file or the new one,
 * but a power cut may lose the new one); on failure removes the temporary, returns
 * false and sets *why (owned). Frees af's strings either way. */
bool atomic_commit(struct atomic_file *af, char **why);
/* Drops what was written (the target is untouched). */
void atomic_abort(struct atomic_file *af);

#endif
