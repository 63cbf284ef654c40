/* data: the data files compiled into gpuopt (data/, by tools/embed.py), or,
 * when GPUOPT_DATA_DIR is set, the same files read from that directory. */
#ifndef GPUOPT_DATA_H
#define GPUOPT_DATA_H

#include <stddef.h>

struct data_file {
	const char *name; /* relative to data/: "rules.json", "knowledge/numpy.json" */
	size_t len;
	const char *text;
};

extern const struct data_file gpuopt_data_files[];
extern const size_t gpuopt_data_file_count;

/* The text of data file name ("try.json"): from GPUOPT_DATA_DIR when set,
 * else the compiled-in copy. Owned by the caller, NUL-terminated, *len (if
 * not NULL) its length. NULL with *why (owned) saying why. */
char *data_read(const char *name, size_t *len, char **why);

#endif
