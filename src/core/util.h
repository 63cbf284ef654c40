/* util: memory helpers that die on exhaustion, a growable byte buffer, and
 * small string helpers shared by every module.
 *
 * Ownership: buf_* functions own buf->data; buf_free() releases it and
 * accepts a zeroed or already-freed buffer. x*alloc() never return NULL: on
 * exhaustion they print `gpuopt: out of memory` and exit 2. */
#ifndef GPUOPT_UTIL_H
#define GPUOPT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct buf {
	char *data; /* NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
};

void buf_reserve(struct buf *b, size_t extra);
void buf_append(struct buf *b, const void *p, size_t n);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Hands the string to the caller (never NULL) and leaves b empty. */
char *buf_steal(struct buf *b);
void buf_free(struct buf *b);

/* A growable array of pointers; the vector owns only its slot array. */
struct ptrvec {
	void **items;
	size_t len;
	size_t cap;
};
void ptrvec_push(struct ptrvec *v, void *p);
void ptrvec_free(struct ptrvec *v);

/* Frees a NULL-terminated array of owned strings, and the array; accepts NULL. */
void strv_free(char **v);

/* A size for people, owned: "123 B", "512 KiB", "1.50 GiB" (powers of 1024). */
char *bytes_text(uint64_t b);

/* The time now, UTC, as "2026-12-03T21:55:00Z". Owned. */
char *utc_now_text(void);

bool str_starts_with(const char *s, const char *prefix);
bool str_ends_with(const char *s, const char *suffix);

/* Fault injection, in test builds only (tests/fault: gpuopt-fault, built
 * with -DGPUOPT_FAULT_INJECTION): with GPUOPT_FAULT=OP:N in the environment
 * the Nth call of OP fails as the system call would — OP is alloc (every
 * x*alloc), open (a temporary file), write, fsync, close or rename (in
 * fileio.c). In the real binary FAULT() is false and costs nothing. */
#ifdef GPUOPT_FAULT_INJECTION
bool fault_now(const char *op);
#define FAULT(op) fault_now(op)
#else
#define FAULT(op) false
#endif

#endif
