/* notebook: reads a Jupyter notebook (.ipynb, nbformat 4, and 3's
 * worksheets) and joins its code cells into one Python module, so imports
 * in one cell resolve in the next, with a map from each line back to its
 * cell. IPython syntax is neutralised without moving columns: line magics
 * (%...) and shell escapes (!...) become comments; a cell magic (%%...)
 * comments out its own line, and the whole cell when its body is not
 * Python (%%bash, %%html, %%writefile, ...). */
#ifndef GPUOPT_NOTEBOOK_H
#define GPUOPT_NOTEBOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "source.h"

/* Parses json (len bytes; a UTF-8 byte order mark before it is skipped)
 * as a notebook named path. On success fills out (owned by the caller;
 * source_free); a notebook whose metadata names a kernel language other
 * than Python (kernelspec.language, else language_info.name) gives an
 * empty text and out->language, its cells unread. On failure returns false
 * and sets *why (owned) to what is wrong: not JSON (with line), not a
 * notebook shape, a cell that is not text. */
bool notebook_to_source(const char *path, const char *json, size_t len,
			struct source *out, char **why);

#endif
