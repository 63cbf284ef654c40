/* fuzz_main: runs a libFuzzer target without libFuzzer — every file named on
 * the command line (directories: every file inside) is fed to
 * LLVMFuzzerTestOneInput once. Used as a plain test over the seed corpus. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= run_file(argv[i]);
			runs++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
			failed |= run_file(path);
			runs++;
		}
		if (d)
			closedir(d);
	}
	printf("%d inputs run\n", runs);
	return failed || runs == 0;
}
