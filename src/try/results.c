/* results: see results.h. */
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/paths.h"
#include "core/util.h"
#include "scratch.h"

static const char marker_text[] = "gpuopt try results: this directory is written by `gpuopt try`, which may\n"
				   "remove what it wrote here (never anything else).\n";

/* True when dir holds try's marker, or an older try's contract.json. */
static bool marked(const char *dir)
{
	char *p = xasprintf("%s/%s", dir, RESULTS_MARKER);
	struct stat st;
	bool ok = false;
	if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 4096) {
		struct buf b = {0};
		char *why = NULL;
		ok = read_file(p, 4096, &b, &why) && strncmp(b.data, "gpuopt try results", 18) == 0;
		free(why);
		buf_free(&b);
	}
	free(p);
	if (ok)
		return true;
	p = xasprintf("%s/contract.json", dir);
	json_t *doc = lstat(p, &st) == 0 && S_ISREG(st.st_mode) ? json_load_file(p, 0, NULL) : NULL;
	ok = json_is_object(json_object_get(doc, "contract")) && json_is_string(json_object_get(doc, "gpuopt"));
	json_decref(doc);
	free(p);
	return ok;
}

/* The first entry of dir other than try's own files (owned), or NULL when
 * there is none; *err set when the directory cannot be read. */
static char *first_foreign(const char *dir, int *err)
{
	*err = 0;
	DIR *d = opendir(dir);
	if (!d) {
		*err = errno;
		return NULL;
	}
	char *found = NULL;
	struct dirent *de;
	while (!found && (de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, RESULTS_MARKER) != 0 && strcmp(de->d_name, RESULTS_LOCK) != 0)
			found = xstrdup(de->d_name);
	closedir(d);
	return found;
}

static enum results_refusal lock(struct results_claim *rc, char **why)
{
	char *p = xasprintf("%s/%s", rc->dir, RESULTS_LOCK);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	free(p);
	if (fd < 0) {
		*why = xasprintf("cannot lock the results directory '%s': %s", rc->dir, strerror(errno));
		return RESULTS_IO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		char holder[256] = "";
		ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		*why = xasprintf("the results directory '%s' is in use by another gpuopt try (%s): wait for it "
				 "to finish, or give another directory with -r DIR",
				 rc->dir, *holder ? holder : "holder unknown");
		close(fd);
		return RESULTS_BUSY;
	}
	char stamp[64];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
	char *text = xasprintf("pid %ld, started %s\n", (long)getpid(), stamp);
	if (ftruncate(fd, 0) != 0 || !write_all(fd, text, strlen(text))) {
		/* the lock holds without the note */
	}
	free(text);
	rc->lock_fd = fd;
	return RESULTS_OK;
}

enum results_refusal results_claim(struct results_claim *rc, const char *dir, const char *project, char **why)
{
	*why = NULL;
	rc->dir = NULL;
	rc->lock_fd = -1;
	struct stat st;
	if (stat(dir, &st) != 0) {
		if (errno != ENOENT || !make_dirs(dir)) {
			*why = xasprintf("cannot make the results directory '%s': %s", dir, strerror(errno));
			return RESULTS_IO;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		*why = xasprintf("the results directory '%s' is not a directory", dir);
		return RESULTS_NOT_OURS;
	}
	rc->dir = realpath(dir, NULL);
	if (!rc->dir) {
		*why = xasprintf("cannot use the results directory '%s': %s", dir, strerror(errno));
		return RESULTS_IO;
	}
	char *proj = realpath(project, NULL);
	bool holds_project = proj && path_within(proj, rc->dir);
	free(proj);
	if (holds_project) {
		*why = xasprintf("the results directory '%s' is the project directory or holds it: give try a "
				 "directory of its own (-r DIR, or `results` in the contract; the default is "
				 "gpuopt-try inside the project)", dir);
		return RESULTS_NOT_OURS;
	}
	if (!marked(rc->dir)) {
		int err;
		char *other = first_foreign(rc->dir, &err);
		if (err) {
			*why = xasprintf("cannot read the results directory '%s': %s", dir, strerror(err));
			return RESULTS_IO;
		}
		if (other) {
			*why = xasprintf("the results directory '%s' holds files that gpuopt try did not write (such "
					 "as '%s'): give a new or empty directory (-r DIR, or `results` in the "
					 "contract); try only ever removes what it wrote", dir, other);
			free(other);
			return RESULTS_NOT_OURS;
		}
	}
	enum results_refusal r = lock(rc, why);
	if (r != RESULTS_OK)
		return r;
	char *p = xasprintf("%s/%s", rc->dir, RESULTS_MARKER);
	struct stat ms;
	if (lstat(p, &ms) != 0 && !write_file_atomic(p, marker_text, sizeof marker_text - 1, why)) {
		char *w = *why;
		*why = xasprintf("cannot write '%s': %s", p, w);
		free(w);
		free(p);
		return RESULTS_IO;
	}
	free(p);
	return RESULTS_OK;
}

bool results_remove(const struct results_claim *rc, const char *rel)
{
	if (!rc->dir || !*rel || rel[0] == '/' || strstr(rel, ".."))
		return false;
	/* every directory between the claim and rel must be a real one */
	char *path = xasprintf("%s/%s", rc->dir, rel);
	for (char *s = path + strlen(rc->dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		struct stat st;
		int got = lstat(path, &st), err = errno;
		*s = '/';
		if (got != 0 || !S_ISDIR(st.st_mode)) {
			free(path);
			return got != 0 && err == ENOENT; /* nothing there, or not ours to enter */
		}
	}
	bool ok = remove_tree(path);
	free(path);
	return ok;
}

void results_release(struct results_claim *rc)
{
	if (rc->dir && rc->lock_fd >= 0)
		close(rc->lock_fd);
	free(rc->dir);
	rc->dir = NULL;
	rc->lock_fd = -1;
}
