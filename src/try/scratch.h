/* scratch: a private run directory for each run `gpuopt try` makes, so runs
 * never overwrite each other's files and nothing of the user's is touched.
 *
 * A run directory mirrors the project directory: its directories are made
 * afresh (to a depth of 8), its files up to copy_max bytes are copied, and
 * larger files (input data) are symbolic links to the originals, read where
 * they are. Left out: version-control folders, __pycache__, the results
 * directory and the declared outputs (the run must make them). A virtual
 * environment (a pyvenv.cfg inside, or .venv / venv / node_modules /
 * site-packages) or a directory of more than SCRATCH_MIRROR_MAX entries is
 * one link. So a script that writes its outputs into its working directory
 * writes them into the run directory. The links reach the user's files:
 * try makes the project read-only while it runs (core/readonly.h), so a run
 * that writes through one fails instead; where that cannot be done, try
 * copies far larger files (copy_max) and says what stays linked.
 *
 * Ownership: a scratch owns its strings; scratch_free() releases them (the
 * directory stays on disk). */
#ifndef GPUOPT_TRY_SCRATCH_H
#define GPUOPT_TRY_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/fileio.h"
#include "core/util.h"

#define SCRATCH_COPY_MAX (1u << 20)
/* files copied, not linked, where the project cannot be made read-only */
#define SCRATCH_COPY_UNPROTECTED (256u << 20)
#define SCRATCH_MIRROR_MAX 5000

struct scratch {
	char *dir;            /* the run directory, absolute */
	struct ptrvec made;   /* char *: relative paths of the files put there (sorted) */
	char *project;        /* the project mirrored, resolved (NULL when unknown) */
};

/* Makes dir (which must not exist) a mirror of project, leaving out the
 * relative paths in skip (NULL-terminated); files of at most copy_max bytes
 * are copied, larger ones linked. False with *why (owned). */
bool scratch_make(struct scratch *s, const char *project, const char *dir, char *const *skip,
		  unsigned long long copy_max, char **why);

/* The regular files the run created or rewrote under s->dir (relative
 * paths, sorted, owned strings appended to out). Copies are stamped with
 * the epoch as their time of change, so a copy the run rewrote counts. */
void scratch_new_files(const struct scratch *s, struct ptrvec *out);

void scratch_free(struct scratch *s);

/* Removes path and everything under it (links are removed, never followed).
 * True when nothing is left. */
bool remove_tree(const char *path);

/* Copies the file or directory src to dst (made; links followed), for
 * keeping the reference outputs. False with *why (owned). */
bool copy_tree(const char *src, const char *dst, char **why);

#endif
