/* stepkey: see stepkey.h. */
#include "stepkey.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/runner.h"
#include "core/util.h"

uint64_t stepkey_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t stepkey_str(const char *p, uint64_t h)
{
	h = stepkey_bytes(p, strlen(p), h) ^ 0xff; /* the end mark */
	return h * 0x100000001b3ULL;
}

uint64_t stepkey_files(const char *dir, char *const *files, uint64_t h)
{
	for (size_t i = 0; files && files[i]; i++) {
		h = stepkey_str(files[i], h);
		char *path = files[i][0] == '/' ? xstrdup(files[i]) : xasprintf("%s/%s", dir, files[i]);
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
			h = stepkey_str("(missing)", h);
		} else if (st.st_size > (64 << 20)) {
			char *id = xasprintf("%lld %lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
					     st.st_mtim.tv_nsec);
			h = stepkey_str(id, h);
			free(id);
		} else {
			struct buf b = {0};
			char *why = NULL;
			if (read_file(path, 64u << 20, &b, &why))
				h = stepkey_bytes(b.data, b.len, h);
			else
				h = stepkey_str("(unreadable)", h);
			free(why);
			buf_free(&b);
		}
		free(path);
	}
	return h;
}

static const char probe[] =
	"import os, sys\n"
	"print(sys.executable); print(sys.version)\n"
	"for p in sys.path:\n"
	"    try:\n"
	"        p and print(p, os.stat(p).st_mtime_ns)\n"
	"    except OSError:\n"
	"        pass\n";

/* The probe's output for python (owned), or a note that it did not run. */
static char *fingerprint(const char *python)
{
	int out = temp_fd(), in = open("/dev/null", O_RDWR | O_CLOEXEC);
	char *text = NULL;
	if (out >= 0 && in >= 0) {
		char *argv[] = {(char *)python, "-c", (char *)probe, NULL};
		struct runner_stdio io = {in, out, in, NULL};
		struct run_result r;
		if (runner_run(argv, &io, 60, &r) && run_ok(&r))
			text = temp_fd_text(out, 1u << 20);
	}
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	return text ? text : xasprintf("(%s did not run)", python);
}

uint64_t stepkey_python(const char *python, uint64_t h)
{
	/* a handful of interpreters per try: a short list, kept for the process */
	static struct { char *name, *print; } seen[16];
	static size_t nseen;
	for (size_t i = 0; i < nseen; i++)
		if (strcmp(seen[i].name, python) == 0)
			return stepkey_str(seen[i].print, stepkey_str(python, h));
	char *print = fingerprint(python);
	h = stepkey_str(print, stepkey_str(python, h));
	if (nseen < sizeof seen / sizeof *seen) {
		seen[nseen].name = xstrdup(python);
		seen[nseen++].print = print;
	} else {
		free(print);
	}
	return h;
}
