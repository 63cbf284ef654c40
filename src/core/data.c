/* data: see data.h. */
#include "data.h"

#include <stdlib.h>
#include <string.h>

#include "fileio.h"

bool data_read(const char *name, struct buf *out, char **why)
{
	*why = NULL;
	const char *dir = getenv("GPUOPT_DATA_DIR");
	if (dir && *dir) {
		char *path = xasprintf("%s/%s", dir, name);
		char *err = NULL;
		bool ok = read_file(path, 64u << 20, out, &err);
		if (!ok)
			*why = xasprintf("cannot read '%s': %s", path, err);
		free(err);
		free(path);
		return ok;
	}
	for (size_t i = 0; i < gpuopt_data_file_count; i++)
		if (strcmp(gpuopt_data_files[i].name, name) == 0) {
			buf_append(out, gpuopt_data_files[i].text, gpuopt_data_files[i].len);
			return true;
		}
	*why = xasprintf("no data file '%s' is compiled in", name);
	return false;
}
