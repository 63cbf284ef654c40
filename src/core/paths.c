/* paths: see paths.h. */
#include "paths.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const skip_dirs[] = {
	".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", "site-packages",
	"node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
	".ipynb_checkpoints",
};

void path_error_add(struct ptrvec *errors, const char *path, const char *message)
{
	struct path_error *e = xmalloc(sizeof *e);
	e->path = xstrdup(path);
	e->message = xstrdup(message);
	ptrvec_push(errors, e);
}

/* A glob matches the path, the path without a leading "./", or the base
 * name; a glob ending in '/' ("sub/") names directories only. */
static bool excluded(const char *path, const char *base, bool is_dir, char *const *excludes)
{
	const char *rel = str_starts_with(path, "./") ? path + 2 : path;
	for (size_t i = 0; excludes && excludes[i]; i++) {
		const char *g = excludes[i];
		size_t n = strlen(g);
		if (n > 1 && g[n - 1] == '/') {
			if (!is_dir)
				continue;
			while (n > 1 && g[n - 1] == '/')
				n--;
			char *d = xstrndup(g, n);
			bool m = fnmatch(d, path, 0) == 0 || fnmatch(d, rel, 0) == 0 || fnmatch(d, base, 0) == 0;
			free(d);
			if (m)
				return true;
			continue;
		}
		if (fnmatch(g, path, 0) == 0 || fnmatch(g, rel, 0) == 0 || fnmatch(g, base, 0) == 0)
			return true;
	}
	return false;
}

const char *path_kind_name(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a named pipe (FIFO)" : S_ISSOCK(m) ? "a socket"
	     : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* The files taken so far, by device and inode, so a file named twice (or
 * named and found again in a directory) is scanned once. */
struct devino {
	dev_t dev;
	ino_t ino;
};

struct seen {
	struct devino *slot;
	size_t n, cap; /* cap: a power of two, or 0 */
};

/* True when (dev, ino) was not seen before (and is now). */
static bool first_sight(struct seen *s, dev_t dev, ino_t ino)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct devino *slot = xcalloc(cap, sizeof *slot);
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i].ino || s->slot[i].dev) {
				size_t k = ((size_t)s->slot[i].ino * 0x9e3779b97f4a7c15ull ^ (size_t)s->slot[i].dev) & (cap - 1);
				while (slot[k].ino || slot[k].dev)
					k = (k + 1) & (cap - 1);
				slot[k] = s->slot[i];
			}
		free(s->slot);
		s->slot = slot;
		s->cap = cap;
	}
	if (!ino && !dev)
		ino = 1; /* (0, 0) marks an empty slot */
	size_t k = ((size_t)ino * 0x9e3779b97f4a7c15ull ^ (size_t)dev) & (s->cap - 1);
	while (s->slot[k].ino || s->slot[k].dev) {
		if (s->slot[k].ino == ino && s->slot[k].dev == dev)
			return false;
		k = (k + 1) & (s->cap - 1);
	}
	s->slot[k].dev = dev;
	s->slot[k].ino = ino;
	s->n++;
	return true;
}

bool path_arg_ok(const char *p, char **why)
{
	*why = NULL;
	struct stat st, lst;
	if (strcmp(p, "-") == 0)
		return true;
	if (stat(p, &st) != 0) {
		*why = xstrdup(errno == ELOOP ? "symbolic link loop"
			       : errno == ENOENT && lstat(p, &lst) == 0 ? "broken symbolic link"
			       : strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		*why = xasprintf("%s, not a file or directory to scan (give - to read standard input)",
				 path_kind_name(st.st_mode));
		return false;
	}
	return true;
}

static bool skipped_dir(const char *path, const char *base)
{
	for (size_t i = 0; i < sizeof skip_dirs / sizeof *skip_dirs; i++)
		if (strcmp(base, skip_dirs[i]) == 0)
			return true;
	char *cfg = xasprintf("%s/pyvenv.cfg", path);
	bool venv = access(cfg, F_OK) == 0;
	free(cfg);
	return venv;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct walk {
	char *const *excludes;
	struct pathlist *out;
	struct seen seen;
	dev_t devs[256];
	ino_t inos[256];
	int depth;
};

static void walk_dir(struct walk *w, const char *path, const struct stat *st)
{
	for (int i = 0; i < w->depth; i++)
		if (w->devs[i] == st->st_dev && w->inos[i] == st->st_ino) {
			path_error_add(&w->out->errors, path, "symbolic link loop: this directory contains itself");
			return;
		}
	if (w->depth >= 256) {
		path_error_add(&w->out->errors, path, "directories nested more than 256 deep; not descending");
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		char *m = xasprintf("cannot read directory: %s", strerror(errno));
		path_error_add(&w->out->errors, path, m);
		free(m);
		return;
	}
	w->devs[w->depth] = st->st_dev;
	w->inos[w->depth] = st->st_ino;
	w->depth++;
	struct ptrvec names = {0};
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			ptrvec_push(&names, xstrdup(de->d_name));
	closedir(d);
	if (names.len > 1)
		qsort(names.items, names.len, sizeof *names.items, name_cmp);
	for (size_t i = 0; i < names.len; i++) {
		const char *base = names.items[i];
		char *child = str_ends_with(path, "/") ? xasprintf("%s%s", path, base)
						       : xasprintf("%s/%s", path, base);
		struct stat cst;
		bool got = stat(child, &cst) == 0;
		int err = errno;
		if (excluded(child, base, got && S_ISDIR(cst.st_mode), w->excludes)) {
			/* skipped on request */
		} else if (!got) {
			errno = err;
			struct stat lst;
			const char *why = errno == ELOOP ? "symbolic link loop"
					: lstat(child, &lst) == 0 && S_ISLNK(lst.st_mode) ? "broken symbolic link"
					: strerror(errno);
			path_error_add(&w->out->errors, child, why);
		} else if (S_ISDIR(cst.st_mode)) {
			if (!skipped_dir(child, base))
				walk_dir(w, child, &cst);
		} else if (S_ISREG(cst.st_mode) &&
			   (str_ends_with(base, ".py") || str_ends_with(base, ".ipynb"))) {
			if (first_sight(&w->seen, cst.st_dev, cst.st_ino)) {
				ptrvec_push(&w->out->files, child);
				child = NULL;
			}
		}
		free(child);
		free(names.items[i]);
	}
	ptrvec_free(&names);
	w->depth--;
}

void paths_collect(char *const *args, int nargs, char *const *excludes, struct pathlist *out)
{
	struct walk w = {.excludes = excludes, .out = out};
	bool stdin_taken = false;
	for (int i = 0; i < nargs; i++) {
		const char *p = args[i];
		struct stat st;
		char *why;
		if (strcmp(p, "-") == 0) {
			if (!stdin_taken)
				ptrvec_push(&out->files, xstrdup(p));
			stdin_taken = true;
		} else if (!path_arg_ok(p, &why)) {
			path_error_add(&out->errors, p, why);
			free(why);
		} else if (stat(p, &st) != 0) {
			path_error_add(&out->errors, p, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			w.depth = 0;
			walk_dir(&w, p, &st);
		} else if (first_sight(&w.seen, st.st_dev, st.st_ino)) {
			ptrvec_push(&out->files, xstrdup(p));
		}
	}
	free(w.seen.slot);
}

void pathlist_free(struct pathlist *l)
{
	for (size_t i = 0; i < l->files.len; i++)
		free(l->files.items[i]);
	for (size_t i = 0; i < l->errors.len; i++) {
		struct path_error *e = l->errors.items[i];
		free(e->path);
		free(e->message);
		free(e);
	}
	ptrvec_free(&l->files);
	ptrvec_free(&l->errors);
}

bool path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);
	if (n == 1 && outer[0] == '/')
		return inner[0] == '/';
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}
