/* caplog: a command's output kept within a limit while it streams (gpuopt
 * try's logs, bench's capture of a failing run's stderr): a program that
 * prints 200 MB must not fill the disk, nor gpuopt's memory.
 *
 * The first half of the limit is written to the file as it comes; after
 * that only the last half is kept, in memory (a ring of that size, made
 * when first needed), and caplog_finish writes one line saying how many
 * bytes were dropped, then that tail. With no file (fd < 0) the head is
 * kept in memory too (caplog_text gives it all back).
 *
 * A watcher may see every complete line on the way, dropped ones too
 * (lines longer than CAPLOG_LINE_MAX come in pieces of that size, without
 * their '\n'; a last line without one comes at caplog_finish).
 *
 * Ownership: the struct owns its buffers (caplog_free); the caller owns fd.
 * Writes never fail the program: the first error is kept in err. */
#ifndef GPUOPT_CAPLOG_H
#define GPUOPT_CAPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define CAPLOG_LINE_MAX 65536

struct caplog {
	int fd;              /* the file the output is kept in, or -1 (memory) */
	uint64_t limit;      /* bytes kept at most, besides the line saying what was dropped */
	uint64_t total;      /* bytes the command wrote */
	uint64_t head;       /* of them, kept from the start */
	struct buf mem;      /* the head, with no file; then caplog_finish's whole text */
	char *ring;          /* the last (limit - limit / 2) bytes after the head */
	size_t ring_cap, ring_len, ring_pos; /* ring_pos: where the oldest byte is */
	void (*on_line)(void *ctx, const char *line, size_t len); /* NUL-terminated line */
	void *line_ctx;
	struct buf line;     /* the line being collected for on_line */
	bool head_nl;        /* the head ends with a line break (or is empty) */
	bool finished;
	int err;             /* the first write error (errno), 0 if none */
};

/* Starts keeping output into fd (-1: memory), limit bytes at most; on_line
 * may be NULL. */
void caplog_init(struct caplog *c, int fd, uint64_t limit,
		 void (*on_line)(void *ctx, const char *line, size_t len), void *line_ctx);

/* Takes n more bytes of the output. */
void caplog_write(struct caplog *c, const void *data, size_t n);

/* The output has ended: writes the dropped-bytes line and the tail. False
 * (c->err set) when a write to the file failed, now or before. Once. */
bool caplog_finish(struct caplog *c);

/* Bytes dropped from the middle (known once the output has ended). */
uint64_t caplog_dropped(const struct caplog *c);

/* With no file, after caplog_finish: what was kept, NUL-terminated (owned
 * by c; "" when nothing). */
const char *caplog_text(const struct caplog *c);

/* Frees the buffers (not fd). Accepts a zeroed struct. */
void caplog_free(struct caplog *c);

#endif
