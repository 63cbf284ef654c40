/* fileio: see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool read_file(const char *path, size_t limit, struct buf *out, char **why)
{
	*why = NULL;
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = xstrdup(strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			*why = xstrdup("is a directory");
			goto fail;
		}
		if (S_ISREG(st.st_mode) && (size_t)st.st_size > limit) {
			*why = xasprintf("file is larger than the %zu MB limit", limit >> 20);
			goto fail;
		}
		/* room for the file, one byte to see its end, and the NUL: a
		 * file that does not grow is read in one call plus one at EOF */
		size_t want = out->len + (size_t)st.st_size + 2;
		if (S_ISREG(st.st_mode) && out->cap < want) {
			out->data = xrealloc(out->data, want);
			out->cap = want;
		}
	}
	size_t start = out->len;
	for (;;) {
		if (out->cap - out->len < 2)
			buf_reserve(out, 65536);
		ssize_t n = read(fd, out->data + out->len, out->cap - out->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*why = xstrdup(strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		if (out->len - start > limit) {
			*why = xasprintf("file is larger than the %zu MB limit", limit >> 20);
			goto fail;
		}
	}
	out->data[out->len] = '\0';
	if (fd != STDIN_FILENO)
		close(fd);
	return true;
fail:
	if (fd != STDIN_FILENO)
		close(fd);
	return false;
}

bool write_all(int fd, const char *data, size_t len)
{
	for (size_t off = 0; off < len;) {
		if (FAULT("write")) { /* half of it reaches the file, then the disk is full */
			if (write(fd, data + off, (len - off) / 2) < 0) {
				/* failing anyway */
			}
			errno = ENOSPC;
			return false;
		}
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return false;
		}
		off += (size_t)n;
	}
	return true;
}

static bool write_replace(const char *path, const char *data, size_t len, bool durable, char **why);

bool write_file_atomic(const char *path, const char *data, size_t len, char **why)
{
	return write_replace(path, data, len, true, why);
}

bool write_file_replace(const char *path, const char *data, size_t len, char **why)
{
	return write_replace(path, data, len, false, why);
}

static bool write_replace(const char *path, const char *data, size_t len, bool durable, char **why)
{
	*why = NULL;
	if (strcmp(path, "-") == 0) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0) {
			*why = xstrdup(strerror(errno));
			return false;
		}
		return true;
	}
	char *tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = FAULT("open") ? (errno = EACCES, -1) : mkstemp(tmp);
	if (fd < 0) {
		*why = xstrdup(strerror(errno));
		free(tmp);
		return false;
	}
	if (!write_all(fd, data, len))
		goto fail;
	if (fchmod(fd, 0644) != 0 || (durable && (FAULT("fsync") ? (errno = EIO, true) : fsync(fd) != 0)))
		goto fail;
	if ((FAULT("close") ? (close(fd), errno = EIO, -1) : close(fd)) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (FAULT("rename") ? (errno = EIO, true) : rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	return true;
fail:
	*why = xstrdup(strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return false;
}

static ssize_t cookie_write(void *cookie, const char *data, size_t len)
{
	return write_all((int)(intptr_t)cookie, data, len) ? (ssize_t)len : -1;
}

static int cookie_close(void *cookie)
{
	int fd = (int)(intptr_t)cookie;
	if (FAULT("close")) {
		close(fd);
		errno = EIO;
		return -1;
	}
	return close(fd);
}

bool atomic_open(struct atomic_file *af, const char *path, char **why)
{
	memset(af, 0, sizeof *af);
	*why = NULL;
	af->path = xstrdup(path);
	if (strcmp(path, "-") == 0) {
		/* stdout lives on after us: its buffer is static (set once, before any output) */
		static char stdout_buf[1 << 20];
		static bool buffered;
		if (!buffered)
			setvbuf(stdout, stdout_buf, _IOFBF, sizeof stdout_buf);
		buffered = true;
		af->f = stdout;
		return true;
	}
	af->tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = FAULT("open") ? (errno = EACCES, -1) : mkstemp(af->tmp);
	/* through write_all, so every write is one of ours (and can be failed
	 * on purpose in a test build) */
	cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
	if (fd >= 0)
		af->fd = fd;
	if (fd < 0 || !(af->f = fopencookie((void *)(intptr_t)fd, "w", io))) {
		*why = xstrdup(strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(af->tmp);
		}
		free(af->tmp);
		free(af->path);
		memset(af, 0, sizeof *af);
		return false;
	}
	af->buf = xmalloc(1 << 20);
	setvbuf(af->f, af->buf, _IOFBF, 1 << 20);
	return true;
}

bool atomic_commit(struct atomic_file *af, char **why)
{
	*why = NULL;
	bool ok;
	if (!af->tmp) {
		ok = fflush(af->f) == 0 && !ferror(af->f);
		if (!ok)
			*why = xstrdup(strerror(errno ? errno : EIO));
	} else {
		/* No fsync: the rename alone makes the file whole or absent
		 * whatever happens to gpuopt; a report is cheap to make again,
		 * and syncing 100 MB of it cost more than scanning it did. */
		ok = fflush(af->f) == 0 && !ferror(af->f) && fchmod(af->fd, 0644) == 0;
		int err = errno ? errno : EIO;
		if (fclose(af->f) != 0 && ok) {
			ok = false;
			err = errno;
		}
		if (ok && (FAULT("rename") ? (errno = EIO, true) : rename(af->tmp, af->path) != 0)) {
			ok = false;
			err = errno;
		}
		if (!ok) {
			*why = xstrdup(strerror(err));
			unlink(af->tmp);
		}
	}
	free(af->tmp);
	free(af->path);
	free(af->buf);
	memset(af, 0, sizeof *af);
	return ok;
}

void atomic_abort(struct atomic_file *af)
{
	if (af->tmp) {
		fclose(af->f);
		unlink(af->tmp);
	}
	free(af->tmp);
	free(af->path);
	free(af->buf);
	memset(af, 0, sizeof *af);
}
