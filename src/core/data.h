/* data: the data files compiled into gpuopt (data/, by tools/embed.py), or,
 * when GPUOPT_DATA_DIR is set, the same files read from that directory. */
#ifndef GPUOPT_DATA_H
#define GPUOPT_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct data_file {
	const char *name; /* relative to data/: "rules.json", "knowledge/numpy.json" */
	size_t len;
	const char *text;
};

extern const struct data_file gpuopt_data_files[];
extern const size_t gpuopt_data_file_count;

/* Appends the text of data file `name` ("gpus.json", "probes/doctor.py") to
 * out: read from $GPUOPT_DATA_DIR/name when that variable is set, else the
 * compiled-in copy. False with *why (owned) when it is missing or unreadable. */
bool data_read(const char *name, struct buf *out, char **why);

#endif
