/* readonly: see readonly.h. */
#include "readonly.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "paths.h"
#include "util.h"

static bool write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n;
	close(fd);
	return ok;
}

/* The per-mount flags of the mount holding path, as mount(2) takes them: a
 * remount inside a user namespace must keep the ones it inherited. */
static unsigned long mount_flags(const char *path)
{
	struct statvfs v;
	if (statvfs(path, &v) != 0)
		return 0;
	unsigned long f = 0;
	if (v.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (v.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (v.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (v.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (v.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (v.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

/* A new mount namespace, with a user namespace when not privileged. */
static bool new_namespace(char **why)
{
	if (unshare(CLONE_NEWNS) == 0)
		return true;
	int first = errno;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
		*why = xasprintf("no private mount namespace here (unshare: %s; with a user namespace: %s)",
				 strerror(first), strerror(errno));
		return false;
	}
	char map[64];
	snprintf(map, sizeof map, "%lu %lu 1\n", (unsigned long)uid, (unsigned long)uid);
	bool ok = write_proc("/proc/self/uid_map", map);
	write_proc("/proc/self/setgroups", "deny\n");
	snprintf(map, sizeof map, "%lu %lu 1\n", (unsigned long)gid, (unsigned long)gid);
	ok = ok && write_proc("/proc/self/gid_map", map);
	if (!ok)
		*why = xasprintf("cannot map the user into a user namespace: %s", strerror(errno));
	return ok;
}

static bool bind(const char *path, bool ro, char **why)
{
	unsigned long keep = mount_flags(path);
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0 ||
	    mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | keep | (ro ? MS_RDONLY : 0), NULL) != 0) {
		*why = xasprintf("cannot make '%s' %s: %s", path, ro ? "read-only" : "writable", strerror(errno));
		return false;
	}
	return true;
}

/* The entries a walk for links looks at, at most: a project bigger than
 * that keeps its deeper links unprotected. */
#define LINK_WALK_MAX 200000

/* Whether path is top or one of the writable directories (resolved,
 * NULL-terminated), or holds one: made read-only, it would take them with it. */
static bool holds_any(const char *path, const char *top, char *const *writable)
{
	if (path_within(top, path))
		return true;
	for (size_t i = 0; writable[i]; i++)
		if (path_within(writable[i], path))
			return true;
	return false;
}

/* Adds to out (owned strings) where the symbolic links under dir lead
 * outside top: a write through such a link lands in the user's files
 * there, which the read-only tree does not cover (the second hostile
 * reading: a project's 'outdir -> /home/me/data' let every run replace the
 * data). Not into .git; depth at most 16; *budget entries at most. */
static void outside_links(const char *dir, const char *top, char *const *writable, int depth, long *budget,
			  struct ptrvec *out)
{
	DIR *d = depth <= 16 ? opendir(dir) : NULL;
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) && (*budget)-- > 0) {
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, ".git"))
			continue;
		char *p = xasprintf("%s/%s", dir, name);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
			char *t = realpath(p, NULL);
			bool seen = false;
			for (size_t i = 0; t && i < out->len; i++)
				seen |= !strcmp(out->items[i], t);
			if (t && !seen && !path_within(t, top) && !holds_any(t, top, writable))
				ptrvec_push(out, t);
			else
				free(t);
		} else if (S_ISDIR(st.st_mode)) {
			outside_links(p, top, writable, depth + 1, budget, out);
		}
		free(p);
	}
	closedir(d);
}

/* The mount namespace the process had before its first readonly_tree, while
 * it has another: readonly_leave returns to it. */
static int before_fd = -1;

bool readonly_leave(void)
{
	if (before_fd < 0)
		return true;
	char *cwd = getcwd(NULL, 0);
	bool ok = setns(before_fd, CLONE_NEWNS) == 0;
	if (ok) {
		close(before_fd);
		before_fd = -1;
		if (cwd && chdir(cwd) != 0) {
			/* it stays where it was */
		}
	}
	free(cwd);
	return ok;
}

bool readonly_tree(const char *root, char *const *writable, char **why)
{
	*why = NULL;
	if (before_fd < 0)
		before_fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	char *top = realpath(root, NULL);
	if (!top) {
		*why = xasprintf("'%s': %s", root, strerror(errno));
		return false;
	}
	char *cwd = getcwd(NULL, 0);
	bool ok = new_namespace(why);
	if (ok && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		*why = xasprintf("cannot make the mounts private: %s", strerror(errno));
		ok = false;
	}
	ok = ok && bind(top, true, why);
	/* the writable directories resolved once (those that exist) */
	struct ptrvec wres = {0};
	for (size_t i = 0; writable && writable[i]; i++) {
		char *w = realpath(writable[i], NULL);
		if (w)
			ptrvec_push(&wres, w);
	}
	ptrvec_push(&wres, NULL);
	/* where the tree's links lead out of it, read-only too */
	struct ptrvec out = {0};
	long budget = LINK_WALK_MAX;
	if (ok)
		outside_links(top, top, (char *const *)wres.items, 0, &budget, &out);
	for (size_t i = 0; i < out.len; i++) {
		ok = ok && bind(out.items[i], true, why);
		free(out.items[i]);
	}
	ptrvec_free(&out);
	for (size_t i = 0; wres.items[i]; i++) {
		struct stat st;
		if (ok && path_within(wres.items[i], top) && stat(wres.items[i], &st) == 0 && S_ISDIR(st.st_mode))
			ok = bind(wres.items[i], false, why);
		free(wres.items[i]);
	}
	ptrvec_free(&wres);
	/* the current directory again, through the new mounts */
	if (cwd && chdir(cwd) != 0) {
		/* it stays where it was */
	}
	free(cwd);
	free(top);
	return ok;
}
