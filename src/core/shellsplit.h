/* shellsplit: turn a command line into an argument vector the way a POSIX
 * shell splits a simple command — blanks separate words; single quotes,
 * double quotes and backslashes quote — without running a shell.
 *
 * Anything a shell would do beyond splitting (pipes, redirection, lists,
 * variables, command substitution, globbing, `~`, comments, `NAME=value`
 * prefixes) is refused with a message that names it, so a command line never
 * silently means something else than it would under `sh -c`; the caller can
 * then offer --shell. And the reverse: shell_quote() writes a word so that
 * shell_split() (and sh) read it back unchanged. */
#ifndef GPUOPT_SHELLSPLIT_H
#define GPUOPT_SHELLSPLIT_H

#include <stddef.h>

#include "util.h"

/* Splits line into words. On success returns a NULL-terminated vector of
 * owned strings (free it with shell_words_free) and sets *count when count is
 * not NULL. On failure returns NULL and sets *why to an owned message (the
 * caller frees it) such as "'|' is shell syntax (a pipe) at column 9". An
 * empty or all-blank line is a failure ("empty command"). */
char **shell_split(const char *line, size_t *count, char **why);

/* Frees a vector from shell_split; accepts NULL. */
void shell_words_free(char **words);

/* Appends word to out, quoted when it needs to be (single quotes, with ' as
 * '\''). first: the word is a command name, so a NAME=value look-alike is
 * quoted too. */
void shell_quote(struct buf *out, const char *word, int first);

/* Appends the words of a NULL-terminated vector, quoted and joined by
 * spaces. */
void shell_join(struct buf *out, char *const *words);

#endif
