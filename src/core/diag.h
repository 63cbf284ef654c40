/* diag: the exit-code set and the one way gpuopt prints errors:
 * `gpuopt: <what>: <why>` on stderr; and text made safe for a terminal,
 * for every name and every piece of foreign text (a child's stderr, a line
 * of source) that gpuopt shows in text output. */
#ifndef GPUOPT_DIAG_H
#define GPUOPT_DIAG_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

enum exit_code {
	EXIT_OK = 0,     /* success; nothing at or above the failing level */
	EXIT_FAIL = 1,   /* the check failed: findings, differences, a slower candidate */
	EXIT_USAGE = 2,  /* usage or input error: bad option, unreadable input */
};

/* Prints "gpuopt: " + the formatted message + newline to stderr, the
 * message made safe for a terminal (term_safe_append): a file name or a
 * child's words in it cannot drive the terminal. */
void diag_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Appends s[0..n) to b as it may be shown on a terminal: control characters
 * other than newline and tab (C0, DEL, and the C1 range U+0080-U+009F in
 * UTF-8), and bytes that are not UTF-8, are written as \xNN, one per byte
 * ("\x1b]0;t\x07" for ESC ] 0 ; t BEL); valid UTF-8 text, newlines and tabs
 * are kept as they are. Nothing here can start an escape sequence, set a
 * title, move the cursor or rewrite a line (\r). */
void term_safe_append(struct buf *b, const char *s, size_t n);

/* term_safe_append for a value shown on one line of a listing (a CSV
 * cell): a newline, tab and carriage return too are written escaped, as
 * \n, \t and \r, and so a backslash as \\ (a cell "a<newline>b" shows as
 * a\nb, one "a\nb" as a\\nb). */
void term_safe_append_value(struct buf *b, const char *s, size_t n);

/* term_safe_append of the string s into a new string (owned, never NULL;
 * s NULL gives ""). */
char *term_safe(const char *s);

/* term_safe of s, which it takes and frees (s owned; NULL gives ""): for a
 * text report rendered whole, as in doc = term_safe_take(report_text(r)). */
char *term_safe_take(char *s);

/* Writes s to f made safe for a terminal. */
void term_safe_fputs(const char *s, FILE *f);

/* For a renderer that writes to a FILE: it writes to s->f, a stream in
 * memory, and term_safe_close sends the text on to `to` made safe for a
 * terminal and frees it.
 *     struct term_safe_stream ts;
 *     render(term_safe_open(&ts), ...);
 *     term_safe_close(&ts, stdout);
 * Out of memory ends gpuopt as x*alloc do. */
struct term_safe_stream {
	FILE *f;
	char *text;
	size_t len;
};
FILE *term_safe_open(struct term_safe_stream *s);
void term_safe_close(struct term_safe_stream *s, FILE *to);

#endif
