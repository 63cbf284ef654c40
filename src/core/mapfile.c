/* mapfile: see mapfile.h. */
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Pages are handed back in steps of this many bytes: one madvise per step. */
#define RELEASE_STEP ((size_t)8 << 20)

bool mapfile_open(const char *path, struct mapfile *m, char **why)
{
	memset(m, 0, sizeof *m);
	*why = NULL;
	/* not blocking: a FIFO is refused below, never waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*why = xstrdup(strerror(errno));
		return false;
	}
	bool ok = mapfile_open_fd(fd, m, why);
	close(fd);
	return ok;
}

bool mapfile_open_fd(int fd, struct mapfile *m, char **why)
{
	memset(m, 0, sizeof *m);
	*why = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*why = xstrdup(strerror(errno));
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		*why = xstrdup("is a directory");
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = xstrdup("not a regular file");
		return false;
	}
	if (st.st_size == 0)
		return true;
	if ((unsigned long long)st.st_size > (size_t)-1) {
		*why = xstrdup("file is too large to map");
		return false;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		*why = xstrdup(strerror(errno));
		return false;
	}
	/* Read front to back: ask for aggressive read-ahead. */
	madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	m->data = p;
	m->size = (size_t)st.st_size;
	return true;
}

void mapfile_release(struct mapfile *m, size_t upto)
{
	if (!m->data)
		return;
	if (upto > m->size)
		upto = m->size;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t end = upto / page * page;
	if (end < m->released + RELEASE_STEP && upto < m->size)
		return;
	if (end > m->released) {
		madvise((void *)(m->data + m->released), end - m->released, MADV_DONTNEED);
		m->released = end;
	}
}

void mapfile_reread(struct mapfile *m, size_t from)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (from / page * page < m->released)
		m->released = from / page * page;
}

void mapfile_close(struct mapfile *m)
{
	if (m->data)
		munmap((void *)m->data, m->size);
	memset(m, 0, sizeof *m);
}

/* ---- SIGBUS from a file that shrank ---- */

static _Thread_local struct mapguard *active;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	struct mapguard *g = active;
	for (int i = 0; g && i < 2; i++) {
		const struct mapfile *m = g->maps[i];
		uintptr_t a = (uintptr_t)si->si_addr, lo = m ? (uintptr_t)m->data : 0;
		if (m && m->data && a >= lo && a - lo < m->size) {
			active = NULL;
			g->failed = i;
			siglongjmp(g->jb, 1);
		}
	}
	/* not a guarded map: die of it, as without the guard */
	signal(sig, SIG_DFL);
}

void mapfile_guard_init(struct mapguard *g, const struct mapfile *a, const struct mapfile *b)
{
	memset(g, 0, sizeof *g);
	g->maps[0] = a;
	g->maps[1] = b;
	g->failed = -1;
	static bool installed;
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigaction(SIGBUS, &sa, NULL);
		installed = true;
	}
}

void mapfile_guard_begin(struct mapguard *g)
{
	active = g;
}

void mapfile_guard_end(struct mapguard *g)
{
	if (active == g)
		active = NULL;
}
