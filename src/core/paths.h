/* paths: turns the PATH arguments of a scan into the list of files to read.
 * Directories are walked recursively in name order; `.git` and other VCS
 * folders, virtual environments (a pyvenv.cfg inside, or .venv / venv /
 * .tox / .nox), site-packages, node_modules and __pycache__ are skipped, as
 * is anything an --exclude glob matches. Inside directories only .py and
 * .ipynb files are taken; a file named on the command line is always taken.
 * A file is taken once however often it is named or found (by device and
 * inode); a named path that is not a regular file or a directory (a FIFO,
 * a device) is refused, never opened. Problems (unreadable directory,
 * broken link, symlink loop) become errors naming the path; the walk goes
 * on. An --exclude glob ending in '/' names directories only. */
#ifndef GPUOPT_PATHS_H
#define GPUOPT_PATHS_H

#include <sys/types.h>

#include "util.h"

struct path_error {
	char *path;
	char *message;
};

struct pathlist {
	struct ptrvec files;  /* char *, owned */
	struct ptrvec errors; /* struct path_error *, owned */
};

/* Appends to out. excludes: NULL-terminated array of globs (may be NULL). */
void paths_collect(char *const *args, int nargs, char *const *excludes, struct pathlist *out);
void pathlist_free(struct pathlist *l);

/* True when a PATH argument can be scanned: "-", a regular file or a
 * directory. Else false with *why (owned): the reason, as the walk words it
 * ("No such file or directory", "broken symbolic link", "a named pipe
 * (FIFO), not a file or directory to scan ..."). */
bool path_arg_ok(const char *path, char **why);
/* What a path that is not a regular file is, for messages: "a directory",
 * "a named pipe (FIFO)", "a socket", "a character device", "a block
 * device", else "not a regular file". Static text. */
const char *path_kind_name(mode_t mode);
void path_error_add(struct ptrvec *errors, const char *path, const char *message);

/* True when inner is outer or lies under it, by their text: both absolute
 * and resolved (realpath). "/" holds every absolute path. */
bool path_within(const char *inner, const char *outer);

#endif
