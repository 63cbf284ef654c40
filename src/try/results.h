/* results: the results directory of `gpuopt try`, claimed before anything is
 * written or removed there, so that try never deletes a file it did not
 * write.
 *
 * - A directory is taken only when it is new, empty, or already holds try's
 *   marker file (RESULTS_MARKER; results written by an older gpuopt, with
 *   its contract.json, are recognised and marked). A directory that holds
 *   anything else is refused, and so is the project directory itself or any
 *   directory above it (`results = "."`, `".."`, `"/"`).
 * - Removal goes through results_remove(), which takes only names try
 *   writes, inside the claimed directory, and never follows a link out of it.
 * - A lock (flock on RESULTS_LOCK, released by the kernel when the holder
 *   dies) keeps a second try from using the same directory at once; the one
 *   refused is told who holds it.
 *
 * Ownership: struct results_claim owns its path and lock descriptor;
 * results_release() frees them (the directory stays). */
#ifndef GPUOPT_TRY_RESULTS_H
#define GPUOPT_TRY_RESULTS_H

#include <stdbool.h>

#define RESULTS_MARKER ".gpuopt-try"
#define RESULTS_LOCK ".gpuopt-try.lock"

struct results_claim {
	char *dir;   /* absolute, links resolved */
	int lock_fd; /* -1 when not locked */
};

enum results_refusal {
	RESULTS_OK,
	RESULTS_NOT_OURS, /* exists, holds other files, or is the project or above it */
	RESULTS_BUSY,     /* another try holds the lock */
	RESULTS_IO,       /* cannot be made, read or written */
};

/* Claims dir (made when missing) for the try of the project directory
 * project (absolute): checks it as above, writes the marker, takes the
 * lock. RESULTS_OK, or the refusal with *why (owned) saying what and how
 * to proceed. */
enum results_refusal results_claim(struct results_claim *rc, const char *dir, const char *project, char **why);

/* Removes rel (a name try writes: no "..", no leading '/') and all under
 * it from the claimed directory. A link is removed as a link; a path whose
 * parent is not a real directory inside the claim is left alone. True when
 * nothing is left. */
bool results_remove(const struct results_claim *rc, const char *rel);

/* Releases the lock and frees the path. Accepts a zeroed claim. */
void results_release(struct results_claim *rc);

#endif
