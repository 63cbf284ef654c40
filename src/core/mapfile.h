/* mapfile: read-only memory maps of whole regular files, for inputs too big
 * to copy (verify's arrays, saved traces). A map is read front to back and can hand the
 * pages already read back to the kernel, so the resident memory of a
 * streaming pass stays constant however big the file is.
 *
 * A file that another process truncates while it is mapped (a job still
 * rewriting its output: np.save truncates first) raises SIGBUS on the next
 * read of the lost pages. Reads inside a guard (below) do not die of it:
 * the guarded code is abandoned and the guard says which map failed. */
#ifndef GPUOPT_MAPFILE_H
#define GPUOPT_MAPFILE_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

struct mapfile {
	const unsigned char *data; /* NULL for an empty file */
	size_t size;
	size_t released; /* bytes before this offset were handed back */
};

/* Maps path read-only. Returns false on failure and sets *why to an owned
 * message ("No such file or directory", "is a directory", ...) that the
 * caller frees; *m is then zeroed. */
bool mapfile_open(const char *path, struct mapfile *m, char **why);
/* The same for a descriptor already open for reading (which stays open and
 * the caller's: the map does not need it). */
bool mapfile_open_fd(int fd, struct mapfile *m, char **why);

/* Says the bytes before offset `upto` will not be needed soon: their pages
 * leave this process's resident set (reading them again stays valid and
 * faults them back in from the page cache). Batched: does nothing until a
 * few megabytes have accumulated. */
void mapfile_release(struct mapfile *m, size_t upto);

/* Says reading goes back to offset `from` (a second pass over bytes already
 * released): mapfile_release hands the pages back again as they are read. */
void mapfile_reread(struct mapfile *m, size_t from);

/* Unmaps. Accepts a zeroed or already closed map. */
void mapfile_close(struct mapfile *m);

/* A guard over reads of up to two maps:
 *
 *     struct mapguard g;
 *     mapfile_guard_init(&g, &m[0], &m[1]);
 *     mapfile_guard_begin(&g);
 *     if (sigsetjmp(g.jb, 1) == 0) {
 *             ... read m[0], m[1] ...
 *             mapfile_guard_end(&g);
 *     } else {
 *             ... g.failed (0 or 1): that file shrank while being read ...
 *     }
 *
 * A SIGBUS from a page of a guarded map jumps to the else branch (the
 * guard is then already ended); one from anywhere else kills gpuopt as it
 * would. Locals changed in the guarded branch and read in the other must
 * be volatile. One guard at a time per thread. */
struct mapguard {
	sigjmp_buf jb;
	const struct mapfile *maps[2];
	int failed; /* which map, after a SIGBUS */
};
void mapfile_guard_init(struct mapguard *g, const struct mapfile *a, const struct mapfile *b);
void mapfile_guard_begin(struct mapguard *g);
void mapfile_guard_end(struct mapguard *g);

#endif
