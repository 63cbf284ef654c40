/* mapfile: read-only memory maps of whole regular files, for inputs too big
 * to copy (verify's arrays). A map is read front to back and can hand the
 * pages already read back to the kernel, so the resident memory of a
 * streaming pass stays constant however big the file is.
 *
 * A file that another process truncates while it is mapped raises SIGBUS on
 * the next read of the lost pages; gpuopt does not guard against that. */
#ifndef GPUOPT_MAPFILE_H
#define GPUOPT_MAPFILE_H

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

/* Says the bytes before offset `upto` will not be needed soon: their pages
 * leave this process's resident set (reading them again stays valid and
 * faults them back in from the page cache). Batched: does nothing until a
 * few megabytes have accumulated. */
void mapfile_release(struct mapfile *m, size_t upto);

/* Unmaps. Accepts a zeroed or already closed map. */
void mapfile_close(struct mapfile *m);

#endif
