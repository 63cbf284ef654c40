/* data: finds one of gpuopt's data files by name — from GPUOPT_DATA_DIR
 * when it is set (so a fact can be corrected and tried without
 * rebuilding), else among the files compiled in by tools/embed.py. */
#include "data.h"

#include <stdlib.h>
#include <string.h>

#include "fileio.h"

char *data_read(const char *name, size_t *len, char **why)
{
	*why = NULL;
	const char *dir = getenv("GPUOPT_DATA_DIR");
	if (dir && *dir) {
		char *path = xasprintf("%s/%s", dir, name);
		struct buf b = {0};
		char *err = NULL;
		if (!read_file(path, 64u << 20, &b, &err)) {
			*why = xasprintf("cannot read '%s': %s", path, err);
			free(err);
			free(path);
			buf_free(&b);
			return NULL;
		}
		free(path);
		if (len)
			*len = b.len;
		return buf_steal(&b);
	}
	for (size_t i = 0; i < gpuopt_data_file_count; i++)
		if (strcmp(gpuopt_data_files[i].name, name) == 0) {
			if (len)
				*len = gpuopt_data_files[i].len;
			return xstrndup(gpuopt_data_files[i].text, gpuopt_data_files[i].len);
		}
	*why = xasprintf("data file '%s' is not compiled in", name);
	return NULL;
}
