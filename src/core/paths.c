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

static bool excluded(const char *path, const char *base, char *const *excludes)
{
	for (size_t i = 0; excludes && excludes[i]; i++) {
		const char *rel = str_starts_with(path, "./") ? path + 2 : path;
		if (fnmatch(excludes[i], path, 0) == 0 || fnmatch(excludes[i], rel, 0) == 0 ||
		    fnmatch(excludes[i], base, 0) == 0)
			return true;
	}
	return false;
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
		if (excluded(child, base, w->excludes)) {
			/* skipped on request */
		} else if (stat(child, &cst) != 0) {
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
			ptrvec_push(&w->out->files, child);
			child = NULL;
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
	for (int i = 0; i < nargs; i++) {
		const char *p = args[i];
		struct stat st;
		if (strcmp(p, "-") == 0) {
			ptrvec_push(&out->files, xstrdup(p));
		} else if (stat(p, &st) != 0) {
			struct stat lst;
			const char *why = errno == ELOOP ? "symbolic link loop"
					: errno == ENOENT && lstat(p, &lst) == 0 ? "broken symbolic link"
					: strerror(errno);
			path_error_add(&out->errors, p, why);
		} else if (S_ISDIR(st.st_mode)) {
			w.depth = 0;
			walk_dir(&w, p, &st);
		} else {
			ptrvec_push(&out->files, xstrdup(p));
		}
	}
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
