/* verify: the verify engine's face for code. verify_paths() decides what
 * the two paths hold (.npy, .npz, CSV / TSV, or directories of those, by
 * name and then by their first bytes), walks directories in name order,
 * hands each pair to its comparer (verify_array.c, verify_table.c,
 * verify_recall.c) and returns the report; verify_report.c renders it. */
#include "verify.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/paths.h"

enum ftype { F_NONE, F_NPY, F_NPZ, F_CSV };

static enum ftype type_by_name(const char *p)
{
	if (str_ends_with(p, ".npy") || str_ends_with(p, ".NPY"))
		return F_NPY;
	if (str_ends_with(p, ".npz") || str_ends_with(p, ".NPZ"))
		return F_NPZ;
	if (str_ends_with(p, ".csv") || str_ends_with(p, ".tsv") || str_ends_with(p, ".CSV") ||
	    str_ends_with(p, ".TSV") || str_ends_with(p, ".tab"))
		return F_CSV;
	return F_NONE;
}

/* By name, else by the first bytes. */
static enum ftype type_of(const char *p)
{
	enum ftype t = type_by_name(p);
	if (t != F_NONE)
		return t;
	int fd = open_read(p, FIFO_WAIT_S);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return F_NONE;
	}
	unsigned char m[6] = {0};
	size_t n = fread(m, 1, sizeof m, f);
	fclose(f);
	if (n == 6 && memcmp(m, "\x93NUMPY", 6) == 0)
		return F_NPY;
	if (n >= 4 && memcmp(m, "PK\x03\x04", 4) == 0)
		return F_NPZ;
	return F_NONE;
}

static void compare_files(struct verify_report *r, const char *name, const char *ref,
			  const char *cand)
{
	enum ftype t = type_of(ref), u = type_of(cand);
	if (t == F_NONE) {
		struct vitem *it = vitem_add(r, V_ARRAY, name, ref, cand);
		struct stat st;
		if (stat(ref, &st) != 0)
			vitem_fail(it, xasprintf("cannot read '%s': %s", ref, strerror(errno)));
		else
			vitem_fail(it, xasprintf("cannot read '%s': not a .npy, .npz, .csv or .tsv file", ref));
		return;
	}
	if (u != F_NONE && u != t) {
		static const char *const names[] = {"", ".npy", ".npz", "table"};
		struct vitem *it = vitem_add(r, V_ARRAY, name, ref, cand);
		vitem_fail(it, xasprintf("'%s' and '%s' cannot be compared: one is a %s file, the other a "
					 "%s file", ref, cand, names[t], names[u]));
		return;
	}
	if (t == F_NPY)
		verify_npy(r, name, ref, cand);
	else if (t == F_NPZ)
		verify_npz(r, name, ref, cand);
	else
		verify_table(r, name, ref, cand);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directories a walk is inside, to see a symbolic link that leads
 * back into one of them (`ln -s . ref/self`). */
struct ancestors {
	dev_t dev[65];
	ino_t ino[65];
};

/* Where full leads when it is a symbolic link out of the tree root_real
 * (resolved): the resolved target (owned); else NULL (not a link, a link
 * inside the tree, a dangling one, or no root_real). */
static char *link_out(const char *full, const char *root_real)
{
	struct stat ls;
	if (!root_real || lstat(full, &ls) != 0 || !S_ISLNK(ls.st_mode))
		return NULL;
	char *target = realpath(full, NULL);
	if (target && path_within(target, root_real)) {
		free(target);
		return NULL;
	}
	return target;
}

/* Appends the relative paths of the files gpuopt compares under root/rel,
 * in name order. A directory that is one of its own ancestors (through a
 * symbolic link) is not walked again, and a symbolic link that leads out of
 * the tree (root_real, resolved; `sys -> /usr`) is not followed, to a file
 * or a directory: a notice says so. */
static void walk(const char *root, const char *root_real, const char *rel, int depth, struct ptrvec *out,
		 struct verify_report *r, struct ancestors *up)
{
	char *dir = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	struct stat ds;
	if (stat(dir, &ds) == 0) {
		for (int k = 0; k < depth; k++)
			if (up->dev[k] == ds.st_dev && up->ino[k] == ds.st_ino) {
				verify_notice(r, xasprintf("%s: symbolic link loop: this directory contains itself; "
							   "not walked again", dir));
				free(dir);
				return;
			}
		up->dev[depth] = ds.st_dev;
		up->ino[depth] = ds.st_ino;
	}
	DIR *d = opendir(dir);
	if (!d) {
		struct vitem *it = vitem_add(r, V_ARRAY, *rel ? rel : root, dir, NULL);
		vitem_fail(it, xasprintf("cannot read '%s': %s", dir, strerror(errno)));
		free(dir);
		return;
	}
	struct ptrvec names = {0};
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			ptrvec_push(&names, xstrdup(de->d_name));
	closedir(d);
	if (names.len) /* qsort and bsearch want a real array, even of 0 items */
		qsort(names.items, names.len, sizeof *names.items, cmp_str);
	for (size_t i = 0; i < names.len; i++) {
		char *sub = *rel ? xasprintf("%s/%s", rel, (char *)names.items[i]) : xstrdup(names.items[i]);
		char *full = xasprintf("%s/%s", root, sub);
		char *out_to = link_out(full, root_real);
		struct stat st;
		if (out_to) {
			verify_notice(r, xasprintf("%s: a symbolic link out of '%s' (to '%s'): not followed, not "
						   "compared", full, root, out_to));
			free(out_to);
			free(sub);
		} else if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (depth < 64)
				walk(root, root_real, sub, depth + 1, out, r, up);
			free(sub);
		} else if (type_by_name(sub) != F_NONE) {
			ptrvec_push(out, sub);
		} else {
			free(sub);
		}
		free(full);
		free(names.items[i]);
	}
	ptrvec_free(&names);
	free(dir);
}

/* Whether root/rel, or a directory on the way to it, is a symbolic link
 * out of the tree root_real: the walk does not follow it. */
static bool leads_out(const char *root, const char *root_real, const char *rel)
{
	for (const char *p = rel;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char *path = xasprintf("%s/%.*s", root, (int)(p - rel), rel);
		char *to = link_out(path, root_real);
		free(path);
		if (to) {
			free(to);
			return true;
		}
		if (!*p)
			return false;
	}
}

static void compare_dirs(struct verify_report *r, const char *ref, const char *cand)
{
	struct ptrvec a = {0}, b = {0};
	struct ancestors up;
	char *ref_real = realpath(ref, NULL), *cand_real = realpath(cand, NULL);
	walk(ref, ref_real, "", 0, &a, r, &up);
	walk(cand, cand_real, "", 0, &b, r, &up);
	for (size_t i = 0; i < a.len; i++) {
		const char *rel = a.items[i];
		char *rp = xasprintf("%s/%s", ref, rel), *cp = xasprintf("%s/%s", cand, rel);
		struct stat st;
		if (leads_out(cand, cand_real, rel)) {
			struct vitem *it = vitem_add(r, V_MISSING, rel, rp, NULL);
			it->status = V_FAIL;
			it->note = xstrdup("in the candidate, a symbolic link out of its directory: not followed");
		} else if (stat(cp, &st) != 0 && errno == ENOENT) {
			struct vitem *it = vitem_add(r, V_MISSING, rel, rp, NULL);
			it->status = V_FAIL;
			it->note = xstrdup("missing in the candidate");
		} else {
			compare_files(r, rel, rp, cp);
		}
		free(rp);
		free(cp);
	}
	for (size_t i = 0; i < b.len; i++) {
		bool found = a.len && bsearch(&b.items[i], a.items, a.len, sizeof *a.items, cmp_str);
		if (!found)
			verify_notice(r, xasprintf("only in the candidate, not compared: %s/%s", cand,
						   (char *)b.items[i]));
	}
	for (size_t i = 0; i < a.len; i++)
		free(a.items[i]);
	for (size_t i = 0; i < b.len; i++)
		free(b.items[i]);
	ptrvec_free(&a);
	ptrvec_free(&b);
	free(ref_real);
	free(cand_real);
}

struct verify_report *verify_paths(const struct verify_opts *o, const char *ref, const char *cand)
{
	struct verify_report *rp = xcalloc(1, sizeof *rp);
	rp->reference = ref;
	rp->candidate = cand;
	rp->opts = o;
	struct verify_report *r = rp;
	struct stat sa, sb;
	bool ea = stat(ref, &sa) == 0;
	int erra = errno;
	bool eb = stat(cand, &sb) == 0;
	int errb = errno;
	bool da = ea && S_ISDIR(sa.st_mode);
	bool db = eb && S_ISDIR(sb.st_mode);
	if (o->recall_k) {
		verify_recall(r, ref, cand);
	} else if (da && db) {
		compare_dirs(r, ref, cand);
	} else if ((da && !eb) || (db && !ea)) {
		const char *missing = ea ? cand : ref;
		struct vitem *it = vitem_add(r, V_ARRAY, ref, ref, cand);
		vitem_fail(it, xasprintf("cannot read '%s': %s", missing, strerror(ea ? errb : erra)));
	} else if (da || db) {
		struct vitem *it = vitem_add(r, V_ARRAY, ref, ref, cand);
		vitem_fail(it, xasprintf("'%s' is a directory and '%s' is not: give two files or two "
					 "directories", da ? ref : cand, da ? cand : ref));
	} else {
		compare_files(r, ref, ref, cand);
	}
	if (r->items.len == 0) { /* an empty REFERENCE proves nothing: say so */
		struct vitem *it = vitem_add(r, V_ARRAY, ref, ref, cand);
		vitem_fail(it, xasprintf("no .npy, .npz, .csv or .tsv files under '%s': nothing to "
					 "compare", ref));
	}
	return rp;
}
