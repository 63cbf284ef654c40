/* fileio: see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "runner.h"

int open_direct(const char *path)
{
	for (int i = 0; i < FIFO_WAIT_S * 10; i++) {
		if (runner_interrupted()) {
			errno = EINTR;
			return -1;
		}
		int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0)
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
			return fd;
		}
		if (errno != ENXIO)
			return -1;
		/* a caught signal cuts the nap short (EINTR): checked above */
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	errno = ENXIO;
	return -1;
}

const char *direct_error(int err)
{
	return err == ENXIO ? "a FIFO that no process read from for 10 s"
	     : err == EINTR ? "interrupted by a signal while waiting for a process to read it"
			    : strerror(err);
}

/* write_all for what open_direct opened: to a FIFO or a socket the bytes
 * go without blocking, waiting (poll) while the reader is slow, however
 * long, but never past a signal that gpuopt catches (false, EINTR): a
 * reader that stopped reading cannot keep gpuopt from stopping. */
static bool write_direct(int fd, const char *data, size_t len)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) || fl < 0)
		return write_all(fd, data, len);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	bool ok = true;
	for (size_t off = 0; off < len && ok;) {
		if (runner_interrupted()) {
			errno = EINTR;
			ok = false;
			break;
		}
		ssize_t n = write(fd, data + off, len - off);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = {fd, POLLOUT, 0};
			poll(&p, 1, 100);
		} else {
			if (n == 0)
				errno = EIO;
			ok = false;
		}
	}
	int err = errno;
	fcntl(fd, F_SETFL, fl);
	errno = err;
	return ok;
}

int open_read(const char *path, double wait_s)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
		struct pollfd p = {fd, POLLIN, 0};
		int n;
		while ((n = poll(&p, 1, (int)(wait_s * 1000))) < 0 && errno == EINTR)
			;
		if (n == 0) {
			close(fd);
			errno = ETIMEDOUT;
			return -1;
		}
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

const char *open_read_error(int err)
{
	return err == ETIMEDOUT ? "a FIFO that nothing wrote to for 10 s" : strerror(err);
}

int temp_fd(void)
{
	FILE *f = tmpfile();
	if (!f)
		return -1;
	int fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
	fclose(f);
	return fd;
}

char *temp_fd_text(int fd, size_t limit)
{
	struct buf b = {0};
	buf_puts(&b, ""); /* "" for an empty file */
	if (lseek(fd, 0, SEEK_SET) == 0) {
		while (b.len < limit) {
			buf_reserve(&b, 4096);
			size_t room = b.cap - b.len - 1;
			ssize_t n = read(fd, b.data + b.len, room < limit - b.len ? room : limit - b.len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			b.len += (size_t)n;
			b.data[b.len] = '\0';
		}
	}
	return buf_steal(&b);
}

bool read_file(const char *path, size_t limit, struct buf *out, char **why)
{
	*why = NULL;
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open_read(path, FIFO_WAIT_S);
	if (fd < 0) {
		*why = xstrdup(open_read_error(errno));
		return false;
	}
	bool ok = read_fd(fd, limit, out, why);
	if (fd != STDIN_FILENO)
		close(fd);
	return ok;
}

bool read_fd(int fd, size_t limit, struct buf *out, char **why)
{
	*why = NULL;
	struct stat st;
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			*why = xstrdup("is a directory");
			return false;
		}
		if (S_ISREG(st.st_mode) && (size_t)st.st_size > limit) {
			*why = xasprintf("file is larger than the %zu MB limit", limit >> 20);
			return false;
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
			return false;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		if (out->len - start > limit) {
			*why = xasprintf("file is larger than the %zu MB limit", limit >> 20);
			return false;
		}
	}
	out->data[out->len] = '\0';
	return true;
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

/* ---- temporaries, removed on a fatal signal or an exit ----
 * Every temporary file is in this table from just before it is created
 * until it is renamed or removed. SIGINT, SIGTERM, SIGHUP and SIGQUIT (where
 * nobody else handles them) and exit() (out of memory, say) remove the live
 * ones, so nothing half-written stays behind. Slots are claimed with atomics
 * and read by the signal handler, which only calls unlink. */
enum { MAX_TEMPS = 64, T_FREE = 0, T_FILLING = 1, T_LIVE = 2 };
static struct {
	atomic_int state;
	char path[PATH_MAX];
} temps[MAX_TEMPS];

static void temps_remove(void)
{
	for (int i = 0; i < MAX_TEMPS; i++)
		if (atomic_load(&temps[i].state) == T_LIVE)
			unlink(temps[i].path);
}

static void on_fatal_signal(int sig)
{
	temps_remove();
	raise(sig); /* SA_RESETHAND: the default action once this returns */
}

static void install_cleanup(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue; /* ignored, or someone else's handler (bench's runner) */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal_signal;
		sigfillset(&sa.sa_mask);
		sa.sa_flags = SA_RESETHAND;
		sigaction(sigs[i], &sa, NULL);
	}
	atexit(temps_remove);
}

/* A slot holding path, or -1 when the table is full or path too long. */
static int temp_register(const char *path)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install_cleanup);
	size_t n = strlen(path);
	if (n >= PATH_MAX)
		return -1;
	for (int i = 0; i < MAX_TEMPS; i++) {
		int expect = T_FREE;
		if (atomic_compare_exchange_strong(&temps[i].state, &expect, T_FILLING)) {
			memcpy(temps[i].path, path, n + 1);
			atomic_store(&temps[i].state, T_LIVE);
			return i;
		}
	}
	return -1;
}

static void temp_forget(int slot)
{
	if (slot >= 0)
		atomic_store(&temps[slot].state, T_FREE);
}

/* Creates a new temporary beside target (target.tmp.XXXXXX), registered.
 * Returns its descriptor and sets *tmp (owned) and *slot; -1 and errno on
 * failure. */
static int temp_create(const char *target, char **tmp, int *slot)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	*tmp = NULL;
	*slot = -1;
	if (FAULT("open")) {
		errno = EACCES;
		return -1;
	}
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char r[6];
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t x = (uint64_t)ts.tv_nsec * 2654435761u + (uint64_t)getpid() + (uint64_t)attempt;
			memcpy(r, &x, sizeof r);
		}
		char *name = xasprintf("%s.tmp.%c%c%c%c%c%c", target, chars[r[0] % 62], chars[r[1] % 62],
				       chars[r[2] % 62], chars[r[3] % 62], chars[r[4] % 62], chars[r[5] % 62]);
		int s = temp_register(name); /* before it exists: no moment unguarded */
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*tmp = name;
			*slot = s;
			return fd;
		}
		int err = errno;
		temp_forget(s);
		free(name);
		if (err != EEXIST) {
			errno = err;
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

/* ---- where a write goes ---- */

enum target_kind { T_REPLACE, T_DIRECT };

/* The file a write to path replaces: path itself, or, when path is a
 * symbolic link, the file at its end (followed as editors and compilers
 * do; the target need not exist yet). T_DIRECT: path is a device or a pipe
 * (/dev/null, /dev/stdout), written in place. NULL and errno on failure. */
static char *write_target(const char *path, enum target_kind *kind)
{
	*kind = T_REPLACE;
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return NULL;
		}
		if (!S_ISREG(st.st_mode)) {
			*kind = T_DIRECT;
			return xstrdup(path);
		}
		char *real = realpath(path, NULL);
		if (!real)
			return NULL;
		char *t = xstrdup(real);
		free(real);
		return t;
	}
	if (errno != ENOENT)
		return NULL;
	/* absent: a new file, or the missing end of a chain of links */
	char *p = xstrdup(path);
	for (int hops = 0; hops < 40; hops++) {
		char link[PATH_MAX];
		ssize_t n = readlink(p, link, sizeof link - 1);
		if (n < 0)
			return p; /* not a link: the file to make */
		link[n] = '\0';
		char *slash = strrchr(p, '/');
		char *next = link[0] == '/' || !slash ? xstrdup(link)
			   : xasprintf("%.*s/%s", (int)(slash - p), p, link);
		free(p);
		p = next;
	}
	free(p);
	errno = ELOOP;
	return NULL;
}

/* ---- checking an output before the work ---- */

static const char *const protected_ext[] = {".py", ".ipynb", ".npy", ".npz", ".csv", ".tsv"};

static const char *protected_suffix(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof protected_ext / sizeof *protected_ext; i++) {
		size_t k = strlen(protected_ext[i]);
		if (n > k && strcasecmp(path + n - k, protected_ext[i]) == 0)
			return protected_ext[i];
	}
	return NULL;
}

/* True when name ends with one of the space-separated endings. */
static bool ends_with_any(const char *name, const char *endings)
{
	size_t n = strlen(name);
	for (const char *e = endings; *e;) {
		while (*e == ' ')
			e++;
		size_t k = strcspn(e, " ");
		if (k && n > k && strncasecmp(name + n - k, e, k) == 0)
			return true;
		e += k;
	}
	return false;
}

/* The absolute, resolved form of a path that may not exist yet (its
 * directory resolved, its name kept); NULL when the directory is unknown. */
static char *resolved(const char *path)
{
	char *real = realpath(path, NULL);
	if (real)
		return real;
	const char *slash = strrchr(path, '/');
	char *dir = !slash ? xstrdup(".") : slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
	char *rdir = realpath(dir, NULL);
	free(dir);
	if (!rdir)
		return NULL;
	char *out = xasprintf("%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, slash ? slash + 1 : path);
	free(rdir);
	return out;
}

bool output_same(const char *a, const char *b)
{
	if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	struct stat sa, sb;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
		return true;
	char *ra = resolved(a), *rb = resolved(b);
	bool same = ra && rb && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

/* Why target (existing, st) must not be written as one of in's inputs, or
 * NULL. Owned. */
static char *input_clash(const char *target, const struct stat *st, const struct output_inputs *in)
{
	const char *written = in && in->written ? in->written : "the report";
	char *rt = resolved(target);
	char *why = NULL;
	for (size_t i = 0; !why && in && i < in->n; i++) {
		const char *p = in->paths[i];
		struct stat is;
		if (!p || strcmp(p, "-") == 0 || stat(p, &is) != 0)
			continue;
		if (is.st_dev == st->st_dev && is.st_ino == st->st_ino) {
			why = xasprintf("it is also an input ('%s'): %s would replace it", p, written);
		} else if (S_ISDIR(is.st_mode) && rt) {
			char *rd = realpath(p, NULL);
			bool inside = rd && path_within(rt, rd);
			bool taken = (in->dir_reads && strcmp(in->dir_reads, "*") == 0) ||
				    ends_with_any(rt, in->dir_reads ? in->dir_reads : ".py .ipynb .npy .npz .csv .tsv");
			if (inside && taken)
				why = xasprintf("it is inside the input directory '%s', which is read: %s would "
						"replace one of the inputs (write it elsewhere)", p, written);
			free(rd);
		}
	}
	free(rt);
	return why;
}

bool output_check(const char *path, const struct output_inputs *in, bool force, char **why)
{
	*why = NULL;
	if (strcmp(path, "-") == 0)
		return true;
	if (!*path) {
		*why = xstrdup("the file name is empty");
		return false;
	}
	enum target_kind kind;
	char *target = write_target(path, &kind);
	if (!target) {
		*why = xstrdup(errno == EISDIR ? "it is a directory" : strerror(errno));
		return false;
	}
	bool ok = true;
	struct stat st;
	bool exists = stat(target, &st) == 0;
	if (exists && kind == T_REPLACE) {
		*why = input_clash(target, &st, in);
		ok = !*why;
	}
	const char *ext = protected_suffix(target);
	if (ok && exists && kind == T_REPLACE && ext && !force) {
		if (in && in->written)
			*why = xasprintf("it is a %s file: %s would replace it (--force writes it anyway)", ext,
					 in->written);
		else
			*why = xasprintf("it is a %s file, not a report: writing the report would replace it "
					 "(--force writes it anyway)", ext);
		ok = false;
	}
	if (ok && kind == T_REPLACE) {
		char *slash = strrchr(target, '/');
		char *dir = !slash ? xstrdup(".") : slash == target ? xstrdup("/")
			  : xstrndup(target, (size_t)(slash - target));
		struct stat ds;
		if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode) || access(dir, W_OK) != 0) {
			*why = xasprintf("cannot write into '%s': %s", dir,
					 errno && errno != ENOENT ? strerror(errno) : "no such directory");
			if (stat(dir, &ds) == 0 && !S_ISDIR(ds.st_mode)) {
				free(*why);
				*why = xasprintf("cannot write into '%s': not a directory", dir);
			}
			ok = false;
		}
		free(dir);
	}
	free(target);
	return ok;
}

static void command_files(char *const *argv, struct ptrvec *out, int depth)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		const char *w = argv[i];
		/* a command line inside a word (sh -c 'python3 s.py > log', bash -lc
		 * "..."): its words too, cut at blanks and shell syntax */
		if (depth < 3 && strpbrk(w, " \t\n")) {
			char *copy = xstrdup(w), *save = NULL;
			for (char *c = copy; *c; c++)
				if (strchr(";|&<>()`$\"'", *c))
					*c = ' ';
			struct ptrvec inner = {0};
			for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
				ptrvec_push(&inner, t);
			ptrvec_push(&inner, NULL);
			command_files((char *const *)inner.items, out, depth + 1);
			ptrvec_free(&inner);
			free(copy);
		}
		/* --opt=FILE names a file too */
		const char *eq = w[0] == '-' ? strchr(w, '=') : NULL;
		const char *name = eq ? eq + 1 : w;
		struct stat st;
		if (*name && stat(name, &st) == 0 && !S_ISDIR(st.st_mode))
			ptrvec_push(out, xstrdup(name));
	}
}

void output_command_files(char *const *argv, struct ptrvec *out)
{
	command_files(argv, out, 0);
}

/* ---- whole-or-nothing writes ---- */

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
	enum target_kind kind;
	char *target = write_target(path, &kind);
	if (!target) {
		*why = xstrdup(errno == EISDIR ? "it is a directory" : strerror(errno));
		return false;
	}
	if (kind == T_DIRECT) { /* a device or a pipe: no file to replace */
		int fd = open_direct(target);
		bool ok = fd >= 0 && write_direct(fd, data, len);
		int err = errno;
		if (fd >= 0 && close(fd) != 0 && ok) {
			ok = false;
			err = errno;
		}
		if (!ok)
			*why = xstrdup(direct_error(err));
		free(target);
		return ok;
	}
	char *tmp;
	int slot;
	int fd = temp_create(target, &tmp, &slot);
	if (fd < 0) {
		*why = xstrdup(strerror(errno));
		free(target);
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
	if (FAULT("rename") ? (errno = EIO, true) : rename(tmp, target) != 0)
		goto fail;
	temp_forget(slot);
	free(tmp);
	free(target);
	return true;
fail:
	*why = xstrdup(strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	temp_forget(slot);
	free(tmp);
	free(target);
	return false;
}

bool write_file_atomic(const char *path, const char *data, size_t len, char **why)
{
	return write_replace(path, data, len, true, why);
}

bool write_file_replace(const char *path, const char *data, size_t len, char **why)
{
	return write_replace(path, data, len, false, why);
}

/* The FILE of an atomic file writes through write_all, so every write is
 * one of ours (and can be failed on purpose in a test build); the first
 * error is kept for the message. A failure returns 0, not -1: glibc 2.36
 * subtracts a -1 from a cookie's write as a count (fwrite of more than the
 * buffer then overruns it); 0 is a short write, which marks the stream as
 * failed all the same. */
static ssize_t cookie_write(void *cookie, const char *data, size_t len)
{
	struct atomic_file *af = cookie;
	if (af->direct ? write_direct(af->fd, data, len) : write_all(af->fd, data, len))
		return (ssize_t)len;
	if (!af->err)
		af->err = errno ? errno : EIO;
	return 0;
}

static int cookie_close(void *cookie)
{
	struct atomic_file *af = cookie;
	if (FAULT("close")) {
		close(af->fd);
		errno = EIO;
		return -1;
	}
	return close(af->fd);
}

static void free_strings(struct atomic_file *af)
{
	free(af->tmp);
	free(af->path);
	free(af->buf);
	memset(af, 0, sizeof *af);
	af->fd = -1;
	af->slot = -1;
}

bool atomic_open(struct atomic_file *af, const char *path, char **why)
{
	memset(af, 0, sizeof *af);
	af->fd = -1;
	af->slot = -1;
	*why = NULL;
	if (strcmp(path, "-") == 0) {
		/* stdout lives on after us: its buffer is static (set once, before any output) */
		static char stdout_buf[1 << 20];
		static bool buffered;
		if (!buffered)
			setvbuf(stdout, stdout_buf, _IOFBF, sizeof stdout_buf);
		buffered = true;
		af->path = xstrdup(path);
		af->f = stdout;
		return true;
	}
	enum target_kind kind;
	af->path = write_target(path, &kind);
	if (!af->path) {
		*why = xstrdup(errno == EISDIR ? "it is a directory" : strerror(errno));
		free_strings(af);
		return false;
	}
	if (kind == T_DIRECT) {
		af->fd = open_direct(af->path);
		af->direct = true;
	} else {
		af->fd = temp_create(af->path, &af->tmp, &af->slot);
	}
	cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
	if (af->fd < 0 || !(af->f = fopencookie(af, "w", io))) {
		*why = xstrdup(af->direct ? direct_error(errno) : strerror(errno));
		if (af->fd >= 0)
			close(af->fd);
		if (af->tmp)
			unlink(af->tmp);
		temp_forget(af->slot);
		free_strings(af);
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
	if (af->f == stdout) {
		ok = fflush(af->f) == 0 && !ferror(af->f);
		if (!ok)
			*why = xstrdup(strerror(errno ? errno : EIO));
		free_strings(af);
		return ok;
	}
	/* No fsync: the rename alone makes the file whole or absent whatever
	 * happens to gpuopt; a report is cheap to make again, and syncing 100 MB
	 * of it cost more than scanning it did. */
	errno = 0;
	ok = fflush(af->f) == 0 && !ferror(af->f) && (af->direct || fchmod(af->fd, 0644) == 0);
	int err = af->err ? af->err : errno ? errno : EIO;
	if (fclose(af->f) != 0 && ok) {
		ok = false;
		err = errno;
	}
	if (ok && !af->direct && (FAULT("rename") ? (errno = EIO, true) : rename(af->tmp, af->path) != 0)) {
		ok = false;
		err = errno;
	}
	if (!ok) {
		*why = xstrdup(strerror(err));
		if (af->tmp)
			unlink(af->tmp);
	}
	temp_forget(af->slot);
	free_strings(af);
	return ok;
}

void atomic_abort(struct atomic_file *af)
{
	if (af->f && af->f != stdout) {
		fclose(af->f);
		if (af->tmp)
			unlink(af->tmp);
		temp_forget(af->slot);
	}
	free_strings(af);
}

int stdout_flush_error(void)
{
	errno = 0;
	if (fflush(stdout) != 0)
		return errno ? errno : EIO;
	if (!ferror(stdout))
		return 0;
	errno = 0;
	if (write(STDOUT_FILENO, "", 0) < 0 && errno)
		return errno;
	return EIO;
}

bool make_dirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			free(p);
			return false;
		}
		*s = '/';
	}
	bool ok = mkdir(p, 0755) == 0 || errno == EEXIST;
	free(p);
	return ok;
}

char *user_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (xdg && xdg[0] == '/') /* a relative one is invalid (XDG Base Directory): as if unset */
		return xasprintf("%s/gpuopt", xdg);
	if (home && *home)
		return xasprintf("%s/.cache/gpuopt", home);
	return NULL;
}
