/* scratch: see scratch.h. */
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/paths.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool copy_file(const char *src, const char *dst, mode_t mode, char **why)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		*why = xasprintf("cannot read '%s': %s", src, strerror(errno));
		return false;
	}
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 0777);
	if (out < 0) {
		*why = xasprintf("cannot write '%s': %s", dst, strerror(errno));
		close(in);
		return false;
	}
	char chunk[1 << 16];
	ssize_t n;
	bool ok = true;
	while ((n = read(in, chunk, sizeof chunk)) > 0)
		if (!write_all(out, chunk, (size_t)n)) {
			ok = false;
			break;
		}
	if (n < 0 || !ok || close(out) != 0) {
		*why = xasprintf("cannot copy '%s' to '%s': %s", src, dst, strerror(errno));
		ok = false;
	}
	close(in);
	return ok;
}

static bool skipped(const char *rel, char *const *skip)
{
	for (size_t i = 0; skip && skip[i]; i++)
		if (strcmp(rel, skip[i]) == 0)
			return true;
	return false;
}

/* True when rel is a proper ancestor directory of one of the skipped paths. */
static bool holds_skipped(const char *rel, char *const *skip)
{
	size_t n = strlen(rel);
	for (size_t i = 0; skip && skip[i]; i++)
		if (strncmp(skip[i], rel, n) == 0 && skip[i][n] == '/')
			return true;
	return false;
}

static bool is_venv_like(const char *path, const char *name)
{
	static const char *const names[] = {".venv", "venv", "node_modules", "site-packages", ".tox", ".nox",
					    NULL};
	for (size_t i = 0; names[i]; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	char *cfg = xasprintf("%s/pyvenv.cfg", path);
	bool v = access(cfg, F_OK) == 0;
	free(cfg);
	return v;
}

static size_t count_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	size_t n = 0;
	while (readdir(d) && n <= SCRATCH_MIRROR_MAX + 2)
		n++;
	closedir(d);
	return n;
}

static bool mirror(struct scratch *s, const char *src, const char *dst, const char *rel, int depth,
		   char *const *skip, unsigned long long copy_max, char **why)
{
	DIR *d = opendir(src);
	if (!d) {
		*why = xasprintf("cannot read '%s': %s", src, strerror(errno));
		return false;
	}
	bool ok = true;
	struct dirent *de;
	while (ok && (de = readdir(d))) {
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0 ||
		    strcmp(name, ".hg") == 0 || strcmp(name, ".svn") == 0 || strcmp(name, "__pycache__") == 0)
			continue;
		char *r = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		char *from = xasprintf("%s/%s", src, name), *to = xasprintf("%s/%s", dst, name);
		struct stat st;
		if (skipped(r, skip) || lstat(from, &st) != 0) {
			/* left out, or gone meanwhile */
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(from, target, sizeof target - 1);
			if (n >= 0) {
				target[n] = '\0';
				/* a relative link out of the project would dangle in the run
				 * directory: it leads where it leads from the project (and
				 * is read-only there to the runs: readonly_tree) */
				char *real = target[0] != '/' ? realpath(from, NULL) : NULL;
				if (real && s->project && !path_within(real, s->project) && strlen(real) < sizeof target)
					strcpy(target, real);
				free(real);
				if (symlink(target, to) != 0) {
					*why = xasprintf("cannot make '%s': %s", to, strerror(errno));
					ok = false;
				}
			}
		} else if (S_ISDIR(st.st_mode)) {
			bool deep = depth >= 8 || is_venv_like(from, name) || count_entries(from) > SCRATCH_MIRROR_MAX;
			if (deep && !holds_skipped(r, skip)) {
				if (symlink(from, to) != 0) {
					*why = xasprintf("cannot make '%s': %s", to, strerror(errno));
					ok = false;
				}
			} else if (mkdir(to, 0755) != 0) {
				*why = xasprintf("cannot make '%s': %s", to, strerror(errno));
				ok = false;
			} else {
				ok = mirror(s, from, to, r, depth + 1, skip, copy_max, why);
			}
		} else if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size <= copy_max) {
			ok = copy_file(from, to, st.st_mode, why);
			if (ok) {
				/* stamped at the epoch: a run that rewrites it shows as an output */
				struct timespec t[2] = {{1, 0}, {1, 0}};
				utimensat(AT_FDCWD, to, t, 0);
				ptrvec_push(&s->made, xstrdup(r));
			}
		} else if (symlink(from, to) != 0) {
			*why = xasprintf("cannot make '%s': %s", to, strerror(errno));
			ok = false;
		}
		free(r);
		free(from);
		free(to);
	}
	closedir(d);
	return ok;
}

bool scratch_make(struct scratch *s, const char *project, const char *dir, char *const *skip,
		  unsigned long long copy_max, char **why)
{
	*why = NULL;
	memset(s, 0, sizeof *s);
	if (!make_dirs(dir) || access(dir, W_OK) != 0) {
		*why = xasprintf("cannot make the run directory '%s': %s", dir, strerror(errno));
		return false;
	}
	char *abs = realpath(dir, NULL);
	s->dir = abs ? abs : xstrdup(dir);
	s->project = realpath(project, NULL);
	bool ok = mirror(s, project, s->dir, "", 0, skip, copy_max, why);
	if (s->made.len)
		qsort(s->made.items, s->made.len, sizeof *s->made.items, cmp_str);
	return ok;
}

static void list_new(const struct scratch *s, const char *dir, const char *rel, int depth, struct ptrvec *out)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, "__pycache__") == 0)
			continue;
		char *r = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		char *full = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(full, &st) == 0) {
			if (S_ISDIR(st.st_mode) && depth < 16) {
				list_new(s, full, r, depth + 1, out);
			} else if (S_ISREG(st.st_mode)) {
				const char *key = r;
				bool was = s->made.len &&
					   bsearch(&key, s->made.items, s->made.len, sizeof *s->made.items, cmp_str);
				if (!was || st.st_mtim.tv_sec != 1 || st.st_mtim.tv_nsec != 0) {
					ptrvec_push(out, r);
					r = NULL;
				}
			}
		}
		free(r);
		free(full);
	}
	closedir(d);
}

void scratch_new_files(const struct scratch *s, struct ptrvec *out)
{
	size_t from = out->len;
	list_new(s, s->dir, "", 0, out);
	if (out->len > from)
		qsort(out->items + from, out->len - from, sizeof *out->items, cmp_str);
}

void scratch_free(struct scratch *s)
{
	free(s->dir);
	free(s->project);
	for (size_t i = 0; i < s->made.len; i++)
		free(s->made.items[i]);
	ptrvec_free(&s->made);
	memset(s, 0, sizeof *s);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

bool remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0;
	return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0;
}

static bool copy_at(const char *src, const char *dst, int depth, char **why)
{
	struct stat st;
	if (lstat(src, &st) == 0 && S_ISLNK(st.st_mode) && depth > 0) {
		/* inside a directory: a link to a file is copied, one to a directory is not */
		if (stat(src, &st) != 0 || !S_ISREG(st.st_mode))
			return true;
	} else if (stat(src, &st) != 0) {
		*why = xasprintf("cannot read '%s': %s", src, strerror(errno));
		return false;
	}
	char *parent = xstrdup(dst);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		make_dirs(parent);
	}
	free(parent);
	if (!S_ISDIR(st.st_mode))
		return copy_file(src, dst, st.st_mode, why);
	if (mkdir(dst, 0755) != 0 && errno != EEXIST) {
		*why = xasprintf("cannot make '%s': %s", dst, strerror(errno));
		return false;
	}
	DIR *d = opendir(src);
	if (!d) {
		*why = xasprintf("cannot read '%s': %s", src, strerror(errno));
		return false;
	}
	bool ok = true;
	struct dirent *de;
	while (ok && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *a = xasprintf("%s/%s", src, de->d_name), *b = xasprintf("%s/%s", dst, de->d_name);
		ok = depth < 32 ? copy_at(a, b, depth + 1, why) : true;
		free(a);
		free(b);
	}
	closedir(d);
	return ok;
}

bool copy_tree(const char *src, const char *dst, char **why)
{
	return copy_at(src, dst, 0, why);
}
